package jsonschema

import "strings"

// Checks of the keywords that combine subschemas.

func checkAnyOf(_ *node, kw *keyword, inst any) []*vError {
	if i, errs := firstValid(kw, inst); i < 0 {
		return noneValid(inst, errs)
	}
	return nil
}

func checkOneOf(_ *node, kw *keyword, inst any) []*vError {
	first, errs := firstValid(kw, inst)
	if first < 0 {
		return noneValid(inst, errs)
	}
	var more []string
	for _, s := range kw.subs[first+1:] {
		if s.isValid(inst) {
			more = append(more, pyRepr(s.src, false))
		}
	}
	if len(more) == 0 {
		return nil
	}
	more = append(more, pyRepr(kw.subs[first].src, false))
	return newErr("%s is valid under each of %s", pyRepr(inst, false), strings.Join(more, ", "))
}

// firstValid tries the subschemas in order and returns the index of the
// first that accepts inst (-1 when none does) with the errors of those
// tried before it.
func firstValid(kw *keyword, inst any) (int, []*vError) {
	var all []*vError
	for i, s := range kw.subs {
		errs := descend(s, inst, nil, i)
		if len(errs) == 0 {
			return i, all
		}
		all = append(all, errs...)
	}
	return -1, all
}

// noneValid is the error of anyOf/oneOf when no subschema matched; the
// subschemas' errors become its context, which best_match descends into.
func noneValid(inst any, context []*vError) []*vError {
	e := newErr("%s is not valid under any of the given schemas", pyRepr(inst, false))
	e[0].context = context
	return e
}
