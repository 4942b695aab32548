package candidates

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// Under a cap (Placement 15.0.0's max_allocation_candidates) the order of
// generation decides the answer, not only its order: Placement stops at
// the cap. So, when one is set, roots and options are visited in
// Placement's order where that order is the same in every process:
//
//   - roots in the order they first appear among the first group's
//     allocation requests, when that group is granular: the iteration
//     order of the Python set of (provider id, root id) pairs its last
//     class's capacity query returned (pyfmt.Set), a sharing provider's
//     anchors following it;
//   - each granular group's options in that same pair order.
//
// The unsuffixed group's requests come from a Python set whose hashes
// include class-name strings, which change with the process's hash seed;
// there the reference itself answers differently from one start to the
// next, and we keep roots ascending and the tree order.

// upstreamRoots orders roots (ascending) as Placement's anchors, dropping
// those where the first group has no option.
func (e *engine) upstreamRoots(roots []int32) []int32 {
	g := e.groups[0]
	if !g.granular || len(g.res) == 0 {
		return roots
	}
	ps := e.s.Providers
	allowed := make([]bool, len(ps))
	for _, r := range roots {
		allowed[r] = true
	}
	out := make([]int32, 0, len(roots))
	push := func(r int32) {
		if allowed[r] {
			allowed[r] = false
			out = append(out, r)
		}
	}
	for _, p := range e.pairOrder(g) {
		if !g.matchSingle(e.s, &ps[p], p) {
			continue
		}
		push(ps[p].Root)
		if ps[p].Sharing {
			for _, a := range ps[p].Anchors {
				push(a)
			}
		}
	}
	return out
}

// sortOptions puts each granular group's options at the current anchor
// in Placement's order.
func (e *engine) sortOptions() {
	if e.rankBy == nil {
		e.rankBy = make([][]int32, len(e.groups))
		for d, g := range e.groups {
			if g.granular && len(g.res) > 0 {
				e.rankBy[d] = e.pairRank(g)
			}
		}
	}
	for d, rank := range e.rankBy {
		if rank != nil {
			slices.SortStableFunc(e.opts[d], func(a, b option) int { return cmp.Compare(rank[a.single], rank[b.single]) })
		}
	}
}

// productRank is the position of the chosen options' product in the
// Cartesian product of the groups' options at this anchor (the first
// group varying slowest), saturating at math.MaxInt64.
func (e *engine) productRank() int64 {
	var rank, scale uint64 = 0, 1
	for d := len(e.groups) - 1; d >= 0; d-- {
		hi, lo := bits.Mul64(uint64(e.chosen[d]), scale)
		var carry uint64
		rank, carry = bits.Add64(rank, lo, 0)
		if hi != 0 || carry != 0 || rank > math.MaxInt64 {
			return math.MaxInt64
		}
		if hi, scale = bits.Mul64(scale, uint64(len(e.opts[d]))); hi != 0 {
			scale = math.MaxUint64
		}
	}
	return int64(rank)
}

// Breadth-first (Placement 15.0.0's allocation_candidates_generation_strategy
// = breadth-first) takes product k of every root in turn before product
// k+1 of any: a candidate's place is (its product's rank at its root,
// the root's place). Without WideTrees the rank counts every product,
// those the filters drop included; with it, Placement's generator yields
// only products within capacity, so the rank counts those (the search
// then counts them, deferring the isolate and same_subtree checks).
// Each root is searched in rank order and the best target candidates so
// far are kept; a root stops at the first rank that can no longer make
// the cut.

// candMeta is what breadth-first and finish need to know of each recorded
// candidate; kept only when one of them needs it (engine.withMeta).
type candMeta struct {
	rank int64
	// drop marks a candidate Placement counts towards the cap and then
	// removes (a pre-1.29 answer's nested candidates).
	drop bool
}

// mergeBreadth follows the root just searched (its candidates from start
// on, in rank order). Candidates accumulate in arrival order, which is
// root order; once there are perRoot of them (the cap, or the limit) they
// are sorted by rank and cut, which sets rankBound, and again each time
// the list doubles, so that sorting costs O(log perRoot) a candidate.
// Merging at every root would copy perRoot candidates per root: 1.3
// million at 1,300 roots and a cap of 1,000.
func (e *engine) mergeBreadth(start int) {
	n := len(e.cands)
	// Folded amounts (inflate.go) index the candidates as recorded, so
	// those answers are ordered at the end, by finishBreadth.
	if e.perRoot == 0 || start == n || e.infl != nil {
		return
	}
	if n >= 2*e.perRoot || e.rankBound == math.MaxInt64 && n >= e.perRoot {
		e.finishBreadth()
		e.boundBreadth()
	}
}

// boundBreadth sets the rank at which a later root's candidates lose.
func (e *engine) boundBreadth() {
	if e.perRoot > 0 && len(e.cands) >= e.perRoot {
		e.rankBound = e.meta[e.perRoot-1].rank
	}
}

// finishBreadth orders the candidates by rank, ties in arrival (root)
// order, and keeps perRoot of them.
func (e *engine) finishBreadth() {
	idx := make([]int, len(e.cands))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(e.meta[a].rank, e.meta[b].rank) })
	cands := make([]Candidate, len(idx))
	meta := make([]candMeta, len(idx))
	for k, i := range idx {
		cands[k], meta[k] = e.cands[i], e.meta[i]
	}
	if e.perRoot > 0 && len(cands) > e.perRoot {
		cands, meta = cands[:e.perRoot], meta[:e.perRoot]
	}
	e.cands, e.meta = cands, meta
}
