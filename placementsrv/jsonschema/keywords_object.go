package jsonschema

import (
	"sort"
	"strings"
)

// Checks of the keywords that apply to objects; like jsonschema's, each
// ignores instances of other types.

// checkProperties checks both properties (entries without a regexp, each
// applying to its own key) and patternProperties (each applying to every
// matching key, in instance order).
func checkProperties(_ *node, kw *keyword, o *Object) []*vError {
	var out []*vError
	for _, p := range kw.props {
		if p.re == nil {
			if v, ok := o.m[p.name]; ok {
				out = append(out, descend(p.node, v, p.name, p.name)...)
			}
			continue
		}
		for _, k := range o.keys {
			if p.re.MatchString(k) {
				out = append(out, descend(p.node, o.m[k], k, p.name)...)
			}
		}
	}
	return out
}

func checkAdditionalProperties(n *node, kw *keyword, o *Object) []*vError {
	// Upstream iterates a set of the extras, so its order is arbitrary;
	// sorted keeps ours deterministic.
	extras := extraProperties(n, kw, o)
	sort.Strings(extras)
	if kw.sub != nil {
		var out []*vError
		for _, k := range extras {
			out = append(out, descend(kw.sub, o.m[k], k, nil)...)
		}
		return out
	}
	if kw.boolean || len(extras) == 0 {
		return nil
	}
	return additionalPropertiesError(n, extras)
}

// extraProperties lists, in instance order, the keys of o that neither
// "properties" nor "patternProperties" of n covers.
func extraProperties(n *node, kw *keyword, o *Object) []string {
	var props []namedNode
	for _, k := range n.keywords {
		if k.name == "properties" {
			props = k.props
		}
	}
	var extras []string
	for _, k := range o.keys {
		known := false
		for _, p := range props {
			if p.name == k {
				known = true
				break
			}
		}
		if known || (kw.patAll != nil && kw.patAll.MatchString(k)) {
			continue
		}
		extras = append(extras, k)
	}
	return extras
}

// additionalPropertiesError words the failure differently when the schema
// has patternProperties, as jsonschema does.
func additionalPropertiesError(n *node, extras []string) []*vError {
	reprs := strReprs(extras)
	if pp, ok := n.src.m["patternProperties"].(*Object); ok {
		verb := "does"
		if len(extras) > 1 {
			verb = "do"
		}
		return newErr("%s %s not match any of the regexes: %s",
			strings.Join(reprs, ", "), verb, strings.Join(strReprs(pp.sortedKeys()), ", "))
	}
	verb := "was"
	if len(extras) > 1 {
		verb = "were"
	}
	return newErr("Additional properties are not allowed (%s %s unexpected)",
		strings.Join(reprs, ", "), verb)
}

func checkRequired(_ *node, kw *keyword, o *Object) []*vError {
	var out []*vError
	for _, r := range kw.strs {
		if _, ok := o.m[r]; !ok {
			out = append(out, newErr("%s is a required property", strRepr(r))...)
		}
	}
	return out
}

func checkMinProperties(_ *node, kw *keyword, inst any) []*vError {
	if o, ok := inst.(*Object); ok && o.len() < kw.count {
		return newErr("%s does not have enough properties", pyRepr(o, false))
	}
	return nil
}

func checkMaxProperties(_ *node, kw *keyword, inst any) []*vError {
	if o, ok := inst.(*Object); ok && o.len() > kw.count {
		return newErr("%s has too many properties", pyRepr(o, false))
	}
	return nil
}
