package explain

import (
	"slices"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
)

// Constraint kinds, as the query names them.
const (
	KindResources    = "resources"
	KindRequired     = "required"
	KindForbidden    = "forbidden"
	KindMemberOf     = "member_of"
	KindNotMemberOf  = "!member_of"
	KindInTree       = "in_tree"
	KindRootRequired = "root_required"
	KindRootForbid   = "root_forbidden"
	KindSameSubtree  = "same_subtree"
	KindGroupPolicy  = "group_policy"
)

// Constraint is one removable part of a request: Index picks the item of
// its kind (the resource, the clause, the trait, the set) in Group.
type Constraint struct {
	Kind  string `json:"kind"`
	Group string `json:"group"`
	Index int    `json:"index"`
	// Text is the constraint as the query spells it.
	Text      string `json:"text"`
	Prefilter bool   `json:"prefilter,omitempty"`
}

// constraints lists req's removable constraints, resources last: a
// capacity is relaxed only when nothing else lets candidates through.
func constraints(req *candidates.Request, pre candidates.PrefilterAdded) []Constraint {
	var out []Constraint
	for i, t := range req.RootRequired {
		out = append(out, Constraint{Kind: KindRootRequired, Index: i, Text: "root_required=" + t, Prefilter: pre.RootAdded(req, i)})
	}
	for i, t := range req.RootForbidden {
		out = append(out, Constraint{Kind: KindRootForbid, Index: i, Text: "root_required=!" + t})
	}
	for gi := range req.Groups {
		out = append(out, groupConstraints(req, gi, pre)...)
	}
	for i, set := range req.SameSubtree {
		out = append(out, Constraint{Kind: KindSameSubtree, Index: i, Text: "same_subtree=" + strings.Join(set, ",")})
	}
	if req.GroupPolicy == candidates.PolicyIsolate {
		out = append(out, Constraint{Kind: KindGroupPolicy, Text: "group_policy=isolate"})
	}
	for _, g := range req.Groups {
		for i, r := range g.Resources {
			out = append(out, Constraint{Kind: KindResources, Group: g.Suffix, Index: i, Text: "resources" + g.Suffix + "=" + r.Class + ":" + itoa64(r.Amount)})
		}
	}
	return out
}

func groupConstraints(req *candidates.Request, gi int, pre candidates.PrefilterAdded) []Constraint {
	g := &req.Groups[gi]
	var out []Constraint
	if g.InTree != "" {
		out = append(out, Constraint{Kind: KindInTree, Group: g.Suffix, Text: "in_tree" + g.Suffix + "=" + g.InTree})
	}
	for i, cl := range g.MemberOf {
		out = append(out, Constraint{Kind: KindMemberOf, Group: g.Suffix, Index: i, Text: "member_of" + g.Suffix + "=" + anyOfText(cl)})
	}
	if len(g.ForbiddenAggs) > 0 {
		out = append(out, Constraint{Kind: KindNotMemberOf, Group: g.Suffix, Text: "member_of" + g.Suffix + "=!" + strings.Join(g.ForbiddenAggs, ",")})
	}
	for i, cl := range g.Required {
		out = append(out, Constraint{Kind: KindRequired, Group: g.Suffix, Index: i, Text: "required" + g.Suffix + "=" + anyOfText(cl)})
	}
	for i, t := range g.Forbidden {
		out = append(out, Constraint{Kind: KindForbidden, Group: g.Suffix, Index: i, Text: "required" + g.Suffix + "=!" + t, Prefilter: pre.ForbiddenAdded(req, gi, i)})
	}
	return out
}

// anyOfText spells a clause: one name, or "in:" and the names.
func anyOfText(cl []string) string {
	if len(cl) == 1 {
		return cl[0]
	}
	return "in:" + strings.Join(cl, ",")
}

// without returns a copy of req with the constraints cs removed. A group
// left without resources, required traits or member_of is dropped with
// its same_subtree membership, as it could no longer be asked for (nor
// could the unsuffixed group without resources).
func without(req candidates.Request, cs []Constraint) candidates.Request {
	out := cloneRequest(req)
	// Remove higher indexes first so that lower ones stay valid.
	sorted := slices.Clone(cs)
	slices.SortStableFunc(sorted, func(a, b Constraint) int { return b.Index - a.Index })
	for _, c := range sorted {
		removeOne(&out, c)
	}
	kept := out.Groups[:0]
	for _, g := range out.Groups {
		if len(g.Resources) == 0 && (g.Suffix == "" || len(g.Required) == 0 && len(g.MemberOf) == 0) {
			for i, set := range out.SameSubtree {
				out.SameSubtree[i] = slices.DeleteFunc(set, func(s string) bool { return s == g.Suffix })
			}
			continue
		}
		kept = append(kept, g)
	}
	out.Groups = kept
	return out
}

func removeOne(req *candidates.Request, c Constraint) {
	switch c.Kind {
	case KindRootRequired:
		req.RootRequired = slices.Delete(req.RootRequired, c.Index, c.Index+1)
		return
	case KindRootForbid:
		req.RootForbidden = slices.Delete(req.RootForbidden, c.Index, c.Index+1)
		return
	case KindSameSubtree:
		req.SameSubtree[c.Index] = nil
		return
	case KindGroupPolicy:
		req.GroupPolicy = candidates.PolicyNone
		return
	}
	i := slices.IndexFunc(req.Groups, func(g candidates.Group) bool { return g.Suffix == c.Group })
	if i < 0 {
		return
	}
	g := &req.Groups[i]
	switch c.Kind {
	case KindResources:
		g.Resources = slices.Delete(g.Resources, c.Index, c.Index+1)
	case KindRequired:
		g.Required = slices.Delete(g.Required, c.Index, c.Index+1)
	case KindForbidden:
		g.Forbidden = slices.Delete(g.Forbidden, c.Index, c.Index+1)
	case KindMemberOf:
		g.MemberOf = slices.Delete(g.MemberOf, c.Index, c.Index+1)
	case KindNotMemberOf:
		g.ForbiddenAggs = nil
	case KindInTree:
		g.InTree = ""
	}
}

// blockers finds what keeps an empty answer empty: each constraint whose
// removal alone yields candidates. When there is none, one set is found
// by removing the other constraints in order until candidates appear,
// else all but one requested amount, then minimized. Nil when even a
// single requested amount fits nowhere.
func (x *explainer) blockers() ([]Blocker, error) {
	cs := constraints(&x.req, x.pre)
	var out []Blocker
	for _, c := range cs {
		n, err := x.yields(without(x.req, []Constraint{c}))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, Blocker{Constraints: []Constraint{c}, Roots: n})
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	// constraints lists the amounts last.
	nres := slices.IndexFunc(cs, func(c Constraint) bool { return c.Kind == KindResources })
	if nres < 0 {
		nres = len(cs)
	}
	tries := make([][]Constraint, 0, len(cs))
	for k := 2; k <= nres; k++ {
		tries = append(tries, cs[:k])
	}
	for i := nres; i < len(cs); i++ {
		tries = append(tries, slices.Delete(slices.Clone(cs), i, i+1))
	}
	for _, set := range tries {
		n, err := x.yields(without(x.req, set))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return x.minimize(set)
		}
	}
	return nil, nil
}

// minimize puts back each constraint of set whose removal is not needed.
func (x *explainer) minimize(set []Constraint) ([]Blocker, error) {
	set = slices.Clone(set)
	for i := 0; i < len(set); {
		fewer := slices.Delete(slices.Clone(set), i, i+1)
		n, err := x.yields(without(x.req, fewer))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			set = fewer
			continue
		}
		i++
	}
	n, err := x.yields(without(x.req, set))
	if err != nil {
		return nil, err
	}
	return []Blocker{{Constraints: set, Roots: n}}, nil
}
