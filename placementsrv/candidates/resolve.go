package candidates

import (
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// resAmt is a requested amount of an interned class.
type resAmt struct {
	class  int32
	amount int64
}

// group is a Group resolved against a snapshot.
type group struct {
	idx      int // position in Request.Groups
	suffix   string
	granular bool
	res      []resAmt
	required [][]int32
	forbid   []int32
	// memberOf lists, sorted, the providers that are by themselves in
	// every member_of clause; nil when the group has no member_of.
	memberOf []int32
	badAggs  []int32 // known forbidden aggregates
	// forbidsAggs: the group names forbidden aggregates, known or not.
	forbidsAggs bool
	inTree      int32 // root of the in_tree provider, or -1
}

// resolveOutcome tells Find how resolving one group ended.
type resolveOutcome int

const (
	resolved resolveOutcome = iota
	// noMatch: Placement answers with no candidates at this point.
	noMatch
	// failed: an unknown class or trait (a 400) unless an earlier group
	// already had no candidates.
	failed
)

// resolveGroup interns a group's names in Placement's order: classes,
// member_of (no member → no candidates), traits, in_tree (unknown → no
// candidates).
func resolveGroup(s *readmodel.Snapshot, idx int, in *Group) (*group, resolveOutcome, error) {
	g := &group{idx: idx, suffix: in.Suffix, granular: in.Suffix != "", inTree: -1}
	for _, r := range in.Resources {
		c, ok := s.ClassByName[r.Class]
		if !ok {
			return nil, failed, &NotFoundError{Class: true, Name: r.Class}
		}
		g.res = append(g.res, resAmt{c, r.Amount})
	}
	if len(in.MemberOf) > 0 {
		g.memberOf = membersOfAll(s, in.MemberOf)
		if len(g.memberOf) == 0 {
			return nil, noMatch, nil
		}
	}
	for _, anyOf := range in.Required {
		ids, err := traitIDs(s, anyOf)
		if err != nil {
			return nil, failed, err
		}
		g.required = append(g.required, ids)
	}
	if len(in.Forbidden) > 0 {
		ids, err := traitIDs(s, in.Forbidden)
		if err != nil {
			return nil, failed, err
		}
		g.forbid = ids
	}
	g.forbidsAggs = len(in.ForbiddenAggs) > 0
	for _, a := range in.ForbiddenAggs {
		if id, ok := s.AggByUUID[a]; ok {
			g.badAggs = append(g.badAggs, id)
		}
	}
	if in.InTree != "" {
		p, ok := s.ByUUID[in.InTree]
		if !ok {
			return nil, noMatch, nil
		}
		g.inTree = s.Providers[p].Root
	}
	// Placement keeps a resourceless group's providers among those its
	// required traits or member_of selected; with neither, that set is
	// empty (forbidden traits and aggregates only subtract from it), so
	// the group has no candidates.
	if g.granular && len(g.res) == 0 && len(g.required) == 0 && g.memberOf == nil {
		return nil, noMatch, nil
	}
	return g, resolved, nil
}

func traitIDs(s *readmodel.Snapshot, names []string) ([]int32, error) {
	out := make([]int32, 0, len(names))
	for _, n := range names {
		id, ok := s.TraitByName[n]
		if !ok {
			return nil, &NotFoundError{Name: n}
		}
		out = append(out, id)
	}
	return out, nil
}

// membersOfAll returns the providers that are in at least one aggregate
// of every clause. Unknown aggregate uuids match nothing.
func membersOfAll(s *readmodel.Snapshot, clauses [][]string) []int32 {
	ids := make([][]int32, len(clauses))
	for i, cl := range clauses {
		for _, u := range cl {
			if a, ok := s.AggByUUID[u]; ok {
				ids[i] = append(ids[i], a)
			}
		}
		if len(ids[i]) == 0 {
			return nil
		}
	}
	n := 0
	for _, a := range ids[0] {
		n += len(s.AggMembers[a])
	}
	out := make([]int32, 0, n)
	for _, a := range ids[0] {
	member:
		for _, p := range s.AggMembers[a] {
			prov := &s.Providers[p]
			for _, cl := range ids[1:] {
				if !prov.InAnyAggregate(cl) {
					continue member
				}
			}
			out = append(out, p)
		}
	}
	// A provider in several aggregates of the first clause appears once.
	slices.Sort(out)
	return slices.Compact(out)
}

// holdsRequired reports whether p has one trait of each of required's
// any-of lists.
func holdsRequired(p *readmodel.SnapProvider, required [][]int32) bool {
	for _, anyOf := range required {
		if !p.HasAnyTrait(anyOf) {
			return false
		}
	}
	return true
}

func hasAll(p *readmodel.SnapProvider, traits []int32) bool {
	for _, t := range traits {
		if !p.HasTrait(t) {
			return false
		}
	}
	return true
}

// member reports whether p passes g's member_of by itself.
func (g *group) member(p int32) bool {
	if g.memberOf == nil {
		return true
	}
	_, ok := slices.BinarySearch(g.memberOf, p)
	return ok
}

// matchSingle is the whole test for a provider satisfying a granular
// group alone (Placement's single-provider path): resources, traits and
// aggregates all on the provider itself.
func (g *group) matchSingle(s *readmodel.Snapshot, p *readmodel.SnapProvider, pi int32) bool {
	// Traits first: they are on the provider, the inventories a lookup
	// away.
	if !holdsRequired(p, g.required) {
		return false
	}
	for _, r := range g.res {
		inv := s.Inventory(pi, r.class)
		if inv == nil || !inv.Fits(r.amount) {
			return false
		}
	}
	if !g.member(pi) || p.InAnyAggregate(g.badAggs) || p.HasAnyTrait(g.forbid) {
		return false
	}
	return true
}
