package jsonschema

import "strings"

// Checks of the keywords that apply to single values: type, numbers and
// strings, enum and format.

func checkType(_ *node, kw *keyword, inst any) []*vError {
	for _, t := range kw.strs {
		if isType(inst, t) {
			return nil
		}
	}
	return newErr("%s is not of type %s", pyRepr(inst, false), strings.Join(strReprs(kw.strs), ", "))
}

func checkMinimum(_ *node, kw *keyword, inst any) []*vError {
	n, ok := inst.(*number)
	if !ok {
		return nil
	}
	if c, ok := cmpNumbers(n, kw.num); ok && c < 0 {
		return newErr("%s is less than the minimum of %s", numRepr(n), numRepr(kw.num))
	}
	return nil
}

func checkMaximum(_ *node, kw *keyword, inst any) []*vError {
	n, ok := inst.(*number)
	if !ok {
		return nil
	}
	if c, ok := cmpNumbers(n, kw.num); ok && c > 0 {
		return newErr("%s is greater than the maximum of %s", numRepr(n), numRepr(kw.num))
	}
	return nil
}

// countChecker returns the check of a min/max length, items or properties
// keyword.
func countChecker(name string) func(*node, *keyword, any) []*vError {
	switch name {
	case "minLength":
		return checkMinLength
	case "maxLength":
		return checkMaxLength
	case "minItems":
		return checkMinItems
	case "maxItems":
		return checkMaxItems
	case "minProperties":
		return checkMinProperties
	default:
		return checkMaxProperties
	}
}

func checkMinLength(_ *node, kw *keyword, inst any) []*vError {
	if s, ok := inst.(string); ok && runeLen(s) < kw.count {
		return newErr("%s is too short", strRepr(s))
	}
	return nil
}

func checkMaxLength(_ *node, kw *keyword, inst any) []*vError {
	if s, ok := inst.(string); ok && runeLen(s) > kw.count {
		return newErr("%s is too long", strRepr(s))
	}
	return nil
}

func checkPattern(_ *node, kw *keyword, inst any) []*vError {
	s, ok := inst.(string)
	if !ok || kw.re.MatchString(s) {
		return nil
	}
	return newErr("%s does not match %s", strRepr(s), strRepr(kw.value.(string)))
}

func checkEnum(_ *node, kw *keyword, inst any) []*vError {
	for _, e := range kw.value.([]any) {
		if pyEqual(inst, e) {
			return nil
		}
	}
	return newErr("%s is not one of %s", pyRepr(inst, false), pyRepr(kw.value, false))
}

func checkFormat(_ *node, kw *keyword, inst any) []*vError {
	if kw.formatFn == nil || kw.formatFn(inst) {
		return nil
	}
	return newErr("%s is not a %s", pyRepr(inst, false), strRepr(kw.value.(string)))
}
