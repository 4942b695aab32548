package jsonschema

import (
	"fmt"
	"sort"
)

// vError is jsonschema's ValidationError before selection: paths are
// relative to the parent error (for anyOf/oneOf context errors) or to the
// document root.
type vError struct {
	message    string
	keyword    string
	path       []any // string keys and int indices
	schemaPath []any
	instance   any
	schema     *node
	context    []*vError
}

// iterErrors is Validator.iter_errors: every error, in schema keyword order.
func (n *node) iterErrors(inst any) []*vError {
	var out []*vError
	for i := range n.keywords {
		kw := &n.keywords[i]
		for _, e := range kw.check(n, kw, inst) {
			if e.keyword == "" {
				e.keyword = kw.name
				e.instance = inst
				e.schema = n
			}
			e.schemaPath = append([]any{kw.name}, e.schemaPath...)
			out = append(out, e)
		}
	}
	return out
}

func (n *node) isValid(inst any) bool {
	for i := range n.keywords {
		kw := &n.keywords[i]
		if len(kw.check(n, kw, inst)) > 0 {
			return false
		}
	}
	return true
}

// descend is Validator.descend: errors of a subschema with the instance
// and schema path segments prepended.
func descend(sub *node, inst any, path any, schemaPath any) []*vError {
	errs := sub.iterErrors(inst)
	for _, e := range errs {
		if path != nil {
			e.path = append([]any{path}, e.path...)
		}
		if schemaPath != nil {
			e.schemaPath = append([]any{schemaPath}, e.schemaPath...)
		}
	}
	return errs
}

func newErr(format string, args ...any) []*vError {
	return []*vError{{message: fmt.Sprintf(format, args...)}}
}

// relevance is jsonschema's by_relevance key; larger is more relevant.
type relKey struct {
	negPathLen  int
	notWeak     bool
	notMatching bool
}

func relevance(e *vError) relKey {
	return relKey{
		negPathLen:  -len(e.path),
		notWeak:     e.keyword != "anyOf" && e.keyword != "oneOf",
		notMatching: !e.matchesType(),
	}
}

func (e *vError) matchesType() bool {
	if e.schema == nil || e.schema.types == nil {
		return false
	}
	for _, t := range e.schema.types {
		if isType(e.instance, t) {
			return true
		}
	}
	return false
}

func (a relKey) less(b relKey) bool {
	if a.negPathLen != b.negPathLen {
		return a.negPathLen < b.negPathLen
	}
	if a.notWeak != b.notWeak {
		return !a.notWeak
	}
	if a.notMatching != b.notMatching {
		return !a.notMatching
	}
	return false
}

// bestMatch is jsonschema.exceptions.best_match: the most relevant error
// (the first one on ties), then descent into anyOf/oneOf contexts towards
// the least relevant (deepest) sub-error while that choice is unambiguous.
func bestMatch(errs []*vError) *vError {
	if len(errs) == 0 {
		return nil
	}
	best := errs[0]
	bk := relevance(best)
	for _, e := range errs[1:] {
		if k := relevance(e); bk.less(k) {
			best, bk = e, k
		}
	}
	for len(best.context) > 0 {
		// Stable two smallest, as heapq.nsmallest(2, ...).
		ctx := append([]*vError(nil), best.context...)
		sort.SliceStable(ctx, func(i, j int) bool { return relevance(ctx[i]).less(relevance(ctx[j])) })
		if len(ctx) >= 2 && relevance(ctx[0]) == relevance(ctx[1]) {
			return best
		}
		best = ctx[0]
	}
	return best
}
