package jsonschema

// Checks of the keywords that apply to arrays.

func checkItems(_ *node, kw *keyword, l []any) []*vError {
	var out []*vError
	for i, e := range l {
		out = append(out, descend(kw.sub, e, i, nil)...)
	}
	return out
}

func checkMinItems(_ *node, kw *keyword, inst any) []*vError {
	if l, ok := inst.([]any); ok && len(l) < kw.count {
		return newErr("%s is too short", pyRepr(l, false))
	}
	return nil
}

func checkMaxItems(_ *node, kw *keyword, inst any) []*vError {
	if l, ok := inst.([]any); ok && len(l) > kw.count {
		return newErr("%s is too long", pyRepr(l, false))
	}
	return nil
}

func checkUniqueItems(_ *node, kw *keyword, inst any) []*vError {
	l, ok := inst.([]any)
	if !ok || !kw.boolean || allUnique(l) {
		return nil
	}
	return newErr("%s has non-unique elements", pyRepr(l, false))
}

// allUnique reports whether no two elements of l are equal in jsonschema's
// sense.
func allUnique(l []any) bool {
	if allStrings(l) {
		// Common case (aggregate uuids): linear instead of pairwise.
		seen := make(map[string]struct{}, len(l))
		for _, e := range l {
			if _, dup := seen[e.(string)]; dup {
				return false
			}
			seen[e.(string)] = struct{}{}
		}
		return true
	}
	for i := range l {
		for j := i + 1; j < len(l); j++ {
			if pyEqual(l[i], l[j]) {
				return false
			}
		}
	}
	return true
}

func allStrings(l []any) bool {
	for _, e := range l {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}
