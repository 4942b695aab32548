package candidates

import (
	"cmp"
	"math"
	"slices"
)

// sharedOwners decides, for the unsuffixed group, at which anchor an
// option drawn entirely from sharing providers is offered.
//
// Placement 8.0.0 gathers the group's (provider, anchor root, class)
// tuples in a Python set, builds its allocation requests root by root in
// the order the roots first appear in that set, and unions them into one
// set whose equality ignores the anchor. A request served only by sharing
// providers is the same object under every anchor, so the first root (in
// that order) producing it keeps it and the others lose it, whether or not
// the other groups fit there. The tuples hold store ids, so their order
// is reproduced exactly by replaying upstream's set operations (pyset);
// only the insertion order of the sharing anchors (upstream: a set keyed
// by uuid strings, in per-process hash order) is taken as ascending ids,
// which matters only when two tuples collide.
type sharedOwners struct {
	rank  map[int32]int         // root -> position of its first tuple
	roots map[[2]int32][]int32  // (provider, class) -> roots holding it
	has   map[[3]int32]struct{} // (provider, root, class) kept
	owner map[string]int32      // option key -> owning root (-1: none)
}

// sharedOwner returns the anchor that keeps option o of the unsuffixed
// group g.
func (e *engine) sharedOwner(g *group, o *option) int32 {
	if e.owners == nil {
		e.owners = e.buildSharedOwners(g)
	}
	so := e.owners
	key := e.optionKey(o)
	if r, ok := so.owner[key]; ok {
		return r
	}
	allocs := e.allocBuf[o.a0:o.a1]
	best, bestRank := int32(-1), math.MaxInt
	for _, r := range so.roots[[2]int32{allocs[0].Provider, allocs[0].Class}] {
		all := true
		for _, a := range allocs[1:] {
			if _, ok := so.has[[3]int32{a.Provider, r, a.Class}]; !ok {
				all = false
				break
			}
		}
		if rk := so.rank[r]; all && rk < bestRank {
			best, bestRank = r, rk
		}
	}
	so.owner[key] = best
	return best
}

// buildSharedOwners replays get_trees_matching_all's set operations for g.
func (e *engine) buildSharedOwners(g *group) *sharedOwners {
	s := e.s
	so := &sharedOwners{rank: map[int32]int{}, roots: map[[2]int32][]int32{},
		has: map[[3]int32]struct{}{}, owner: map[string]int32{}}
	var cands *pyset
	for _, ra := range g.res {
		rc := e.classTuples(g, ra)
		if rc.len() == 0 {
			return so
		}
		if cands == nil {
			cands = rc
			continue
		}
		both := map[int64]bool{}
		trees := map[int64]bool{}
		cands.each(func(k pytuple) { trees[k.b] = true })
		rc.each(func(k pytuple) {
			if trees[k.b] {
				both[k.b] = true
			}
		})
		cands.merge(rc)
		cands = cands.filter(func(k pytuple) bool { return both[k.b] })
	}
	if cands == nil {
		return so
	}
	classOf := map[int64]int32{}
	for _, ra := range g.res {
		classOf[s.classDBID(ra.class)] = ra.class
	}
	cands.each(func(k pytuple) {
		p, r, c := s.byStoreID(k.a), s.byStoreID(k.b), classOf[k.c]
		if _, ok := so.rank[r]; !ok {
			so.rank[r] = len(so.rank)
		}
		so.has[[3]int32{p, r, c}] = struct{}{}
		so.roots[[2]int32{p, c}] = append(so.roots[[2]int32{p, c}], r)
	})
	return so
}

// classTuples is one class's candidate tuples, filtered as upstream does:
// providers with capacity under their own root, sharing providers under
// each root they anchor, then root_required, member_of (the provider or
// its root a member) and forbidden aggregates (neither a member).
func (e *engine) classTuples(g *group, ra resAmt) *pyset {
	s := e.s
	ps := s.Providers
	cls := s.classDBID(ra.class)
	two := newPyset()
	var sharing []int32
	for _, p := range s.ByClass[ra.class] {
		if g.inTree >= 0 && ps[p].Root != g.inTree {
			continue
		}
		if !fits(ps[p].Inventory(ra.class), ra.amount) {
			continue
		}
		two.add(pytuple{ps[p].ID, ps[ps[p].Root].ID, 0, 2})
		if ps[p].Sharing && g.member(p) && len(ps[p].Aggregates) > 0 {
			sharing = append(sharing, p)
		}
	}
	rc := newPyset()
	rc.merge(withClass(two, cls))
	if g.inTree < 0 && len(sharing) > 0 {
		anchors := newPyset()
		for _, p := range sharing {
			roots := append([]int32{ps[p].Root}, ps[p].Anchors...)
			slices.SortFunc(roots, func(a, b int32) int { return cmp.Compare(ps[a].ID, ps[b].ID) })
			for _, r := range roots {
				anchors.add(pytuple{ps[p].ID, ps[r].ID, 0, 2})
			}
		}
		rc.merge(withClass(anchors, cls))
	}
	if len(e.anchorReq)+len(e.anchorForb) > 0 {
		rc = rc.filter(func(k pytuple) bool { return e.anchorOK(s.byStoreID(k.b)) })
	}
	if g.memberOf != nil {
		rc = rc.filter(func(k pytuple) bool { return g.member(s.byStoreID(k.a)) || g.member(s.byStoreID(k.b)) })
	}
	if g.forbidsAggs {
		rc = rc.filter(func(k pytuple) bool {
			return !inAny(&ps[s.byStoreID(k.a)], g.badAggs) && !inAny(&ps[s.byStoreID(k.b)], g.badAggs)
		})
	}
	return rc
}

// withClass is add_rps: the pairs, in their set's order, as triples.
func withClass(pairs *pyset, cls int64) *pyset {
	out := newPyset()
	pairs.each(func(k pytuple) { out.add(pytuple{k.a, k.b, cls, 3}) })
	return out
}

// byStoreID finds a provider by store id (Providers are in id order).
func (s *Snapshot) byStoreID(id int64) int32 {
	i, _ := slices.BinarySearchFunc(s.Providers, id, func(p SnapProvider, id int64) int { return cmp.Compare(p.ID, id) })
	return int32(i)
}

func (s *Snapshot) classDBID(c int32) int64 {
	if int(c) < len(s.ClassDBIDs) {
		return s.ClassDBIDs[c]
	}
	return 0
}
