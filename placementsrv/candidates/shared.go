package candidates

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
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
// is reproduced exactly by replaying upstream's set operations (pyfmt.Set);
// only the insertion order of the sharing anchors (upstream: a set keyed
// by uuid strings, in per-process hash order) is taken as ascending ids,
// which matters only when two tuples collide.
type sharedOwners struct {
	*ownerOrder
	owner map[string]int32 // option key -> owning root (-1: none)
}

// ownerOrder is the immutable part: the group's final tuples and each
// root's rank in their order.
type ownerOrder struct {
	final *pyfmt.Set // the group's (provider, root, class) tuples, nil: none
	rank  []int32    // by provider: position of a root's first tuple, or -1
	// single is the owner of each one-allocation option, by (provider,
	// class store id): its best-ranked root.
	single map[[2]int64]int32
}

// OwnerCache keeps ownerOrders for one snapshot, keyed by what they
// depend on (the group's amounts and filters, root_required), so that
// repeated requests between two writes replay Python's sets once. It is
// safe for concurrent use.
type OwnerCache struct {
	mu    sync.Mutex
	snap  *readmodel.Snapshot
	byKey map[string]*ownerOrder
}

// ownerCacheSize bounds the orders kept per snapshot.
const ownerCacheSize = 64

func (c *OwnerCache) get(s *readmodel.Snapshot, key string, build func() *ownerOrder) *ownerOrder {
	c.mu.Lock()
	if c.snap == s {
		if o, ok := c.byKey[key]; ok {
			c.mu.Unlock()
			return o
		}
	}
	c.mu.Unlock()
	o := build()
	c.mu.Lock()
	if c.snap != s || len(c.byKey) >= ownerCacheSize {
		c.snap, c.byKey = s, map[string]*ownerOrder{}
	}
	c.byKey[key] = o
	c.mu.Unlock()
	return o
}

// ownerKey names what an ownerOrder depends on.
func (e *engine) ownerKey(g *group) string {
	in := &e.req.Groups[g.idx]
	return fmt.Sprint(g.res, in.MemberOf, in.ForbiddenAggs, g.inTree, e.anchorReq, e.anchorForb)
}

// sharedOwner returns the anchor that keeps option o of the unsuffixed
// group g.
func (e *engine) sharedOwner(g *group, o *option) int32 {
	if e.owners == nil {
		build := func() *ownerOrder { return e.buildOwnerOrder(g) }
		var order *ownerOrder
		if e.opt.Owners != nil {
			order = e.opt.Owners.get(e.s, e.ownerKey(g), build)
		} else {
			order = build()
		}
		e.owners = &sharedOwners{ownerOrder: order, owner: map[string]int32{}}
	}
	so := e.owners
	allocs := e.allocBuf[o.a0:o.a1]
	if len(allocs) == 1 {
		if r, ok := so.single[[2]int64{int64(allocs[0].Provider), e.s.ClassDBID(allocs[0].Class)}]; ok {
			return r
		}
		return -1
	}
	key := e.optionKey(o)
	if r, ok := so.owner[key]; ok {
		return r
	}
	best := int32(-1)
	if so.final != nil {
		first, c0 := allocs[0].Provider, e.s.ClassDBID(allocs[0].Class)
		so.final.Each(func(k *pyfmt.Tuple) {
			if k.PA != first || k.C != c0 || (best >= 0 && so.rank[k.PB] >= so.rank[best]) {
				return
			}
			for _, a := range allocs[1:] {
				t := pyfmt.Tuple{A: e.s.Providers[a.Provider].ID, B: k.B, C: e.s.ClassDBID(a.Class), N: 3, PA: a.Provider, PB: k.PB}
				if !so.final.Contains(t) {
					return
				}
			}
			best = k.PB
		})
	}
	so.owner[key] = best
	return best
}

// buildOwnerOrder replays get_trees_matching_all's set operations for g.
func (e *engine) buildOwnerOrder(g *group) *ownerOrder {
	so := &ownerOrder{}
	pool := &pyfmt.SetPool{}
	var cands *pyfmt.Set
	for _, ra := range g.res {
		rc := e.classTuples(pool, g, ra)
		if rc.Len() == 0 {
			return so
		}
		if cands == nil {
			cands = rc
			continue
		}
		// merge_common_trees: roots in both, union, keep those roots.
		both := make([]bool, len(e.s.Providers))
		trees := make([]bool, len(e.s.Providers))
		cands.Each(func(k *pyfmt.Tuple) { trees[k.PB] = true })
		rc.Each(func(k *pyfmt.Tuple) { both[k.PB] = trees[k.PB] })
		cands.Merge(rc)
		cands = cands.Filter(func(k *pyfmt.Tuple) bool { return both[k.PB] })
	}
	if cands == nil {
		return so
	}
	so.final = cands
	so.rank = make([]int32, len(e.s.Providers))
	for i := range so.rank {
		so.rank[i] = -1
	}
	n := int32(0)
	cands.Each(func(k *pyfmt.Tuple) {
		if so.rank[k.PB] < 0 {
			so.rank[k.PB] = n
			n++
		}
	})
	so.single = map[[2]int64]int32{}
	cands.Each(func(k *pyfmt.Tuple) {
		if !e.s.Providers[k.PA].Sharing {
			return // only options of sharing providers have owners
		}
		key := [2]int64{int64(k.PA), k.C}
		if r, ok := so.single[key]; !ok || so.rank[k.PB] < so.rank[r] {
			so.single[key] = k.PB
		}
	})
	return so
}

// classTuples is one class's candidate tuples, filtered as upstream does:
// providers with capacity under their own root, sharing providers under
// each root they anchor, then root_required, member_of (the provider or
// its root a member) and forbidden aggregates (neither a member).
func (e *engine) classTuples(pool *pyfmt.SetPool, g *group, ra resAmt) *pyfmt.Set {
	s := e.s
	ps := s.Providers
	cls := s.ClassDBID(ra.class)
	two := pool.NewSet()
	var sharing []int32
	for _, p := range s.ByClass[ra.class] {
		if g.inTree >= 0 && ps[p].Root != g.inTree {
			continue
		}
		if !s.Inventory(p, ra.class).Fits(ra.amount) {
			continue
		}
		two.Add(pyfmt.Tuple{A: ps[p].ID, B: ps[ps[p].Root].ID, N: 2, PA: p, PB: ps[p].Root})
		if ps[p].Sharing && g.member(p) && len(ps[p].Aggregates) > 0 {
			sharing = append(sharing, p)
		}
	}
	rc := pool.NewSet()
	rc.Merge(withClass(two, cls))
	if g.inTree < 0 && len(sharing) > 0 {
		anchors := pool.NewSet()
		for _, p := range sharing {
			roots := append([]int32{ps[p].Root}, ps[p].Anchors...)
			slices.SortFunc(roots, func(a, b int32) int { return cmp.Compare(ps[a].ID, ps[b].ID) })
			for _, r := range roots {
				anchors.Add(pyfmt.Tuple{A: ps[p].ID, B: ps[r].ID, N: 2, PA: p, PB: r})
			}
		}
		rc.Merge(withClass(anchors, cls))
	}
	if len(e.anchorReq)+len(e.anchorForb) > 0 {
		rc = rc.Filter(func(k *pyfmt.Tuple) bool { return e.anchorOK(k.PB) })
	}
	if g.memberOf != nil {
		rc = rc.Filter(func(k *pyfmt.Tuple) bool { return g.member(k.PA) || g.member(k.PB) })
	}
	if g.forbidsAggs {
		rc = rc.Filter(func(k *pyfmt.Tuple) bool {
			return !ps[k.PA].InAnyAggregate(g.badAggs) && !ps[k.PB].InAnyAggregate(g.badAggs)
		})
	}
	return rc
}

// withClass is add_rps: the pairs, in their set's order, as triples.
func withClass(pairs *pyfmt.Set, cls int64) *pyfmt.Set {
	out := pairs.Pool().NewSet()
	pairs.Each(func(k *pyfmt.Tuple) {
		t := *k
		t.C, t.N = cls, 3
		out.Add(t)
	})
	return out
}
