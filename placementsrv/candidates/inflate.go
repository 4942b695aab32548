package candidates

import (
	"cmp"
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Placement 8.0.0 folds a product of group requests into one candidate
// by keeping, per (provider, class), the allocation object of the first
// group that has it and adding the later groups' amounts into that
// object. Only group_policy=none copies the object first; otherwise the
// object is the group request's own, which every other product built
// from the same group request shares: the unsuffixed group's objects are
// one per (anchor, provider, class), a granular group's one per
// (provider, class) across all anchors. So each fold leaves its sum
// behind: the final capacity check of later products sees the grown
// amount, and the answer shows every object as it is after the last
// product (`resources=IPV4_ADDRESS:1&resources1=IPV4_ADDRESS:9` offers 10
// addresses for the unsuffixed group in candidates where group 1 took
// its 9 elsewhere).
//
// inflation replays that where it can happen: the unsuffixed group shares
// a class with a granular group and group_policy is not none. At an
// anchor where no provider can serve such a class to both, nothing is
// folded and the ordinary search runs; elsewhere every product is
// checked in Placement's order: groups in request order, the first
// varying slowest, granular requests in Placement's order (rank), the
// unsuffixed group's in our tree order. While no object outgrows its
// inventory, that order changes nothing; once one does, which products
// pass depends on it, and upstream's own order of the unsuffixed group's
// requests follows Python's per-process string hashes (DESIGN.md).
type inflation struct {
	un   int              // position of the unsuffixed group
	objs map[objKey]int32 // granular groups' objects for sharing providers
	amt  []int64          // each object's current amount
	ents arena[int32]     // objects of the recorded candidates' allocations
	recs []inflRecord     // the candidates the replay recorded, in order
	cur  []inflEntry      // scratch: the product being folded
	idx  []int            // scratch: the product's option per group
	// slotObj holds, per group and anchor slot (an inventory the anchor
	// can draw from), the object of the current anchor (-1: none yet).
	slotObj []int32
	// rank orders each granular group's options as Placement lists its
	// requests: by the provider's place in the Python set of (provider,
	// root) pairs its last class's capacity query returned (ints only, so
	// the same in every process).
	rank [][]int32
}

// objKey names a granular group's object for a sharing provider.
type objKey struct{ group, prov, class int32 }

// inflEntry is one allocation of a folded candidate and its object.
type inflEntry struct {
	prov, class, obj int32
	inv              *readmodel.SnapInventory
	add              int64 // the later groups' amounts, to fold into obj
}

// inflRecord is a candidate the replay recorded: its index in e.cands
// and the object of each of its allocations.
type inflRecord struct {
	cand int
	objs []int32
}

// newInflation returns the replay state when the request can fold amounts
// in place, or nil.
func (e *engine) newInflation() *inflation {
	if e.req.GroupPolicy == PolicyNone || len(e.groups) < 2 {
		return nil
	}
	un := slices.IndexFunc(e.groups, func(g *group) bool { return !g.granular })
	if un < 0 {
		return nil
	}
	for _, g := range e.groups {
		if !g.granular {
			continue
		}
		for _, ra := range g.res {
			if slices.ContainsFunc(e.groups[un].res, func(u resAmt) bool { return u.class == ra.class }) {
				return &inflation{un: un, objs: map[objKey]int32{}}
			}
		}
	}
	return nil
}

// folds reports whether some provider at the current anchor can serve a
// class to the unsuffixed group and to a granular group (e.lists holds
// the unsuffixed group's providers per class for this anchor).
func (in *inflation) folds(e *engine) bool {
	ug := e.groups[in.un]
	for d, g := range e.groups {
		if !g.granular {
			continue
		}
		for _, o := range e.opts[d] {
			for _, a := range e.allocBuf[o.a0:o.a1] {
				k := slices.IndexFunc(ug.res, func(u resAmt) bool { return u.class == a.Class })
				if k >= 0 && slices.Contains(e.lists[k], o.lsingle) {
					return true
				}
			}
		}
	}
	return false
}

// anchor checks every product of the groups' options at anchor r in
// Placement's order, folding amounts into the shared objects.
func (in *inflation) anchor(e *engine, r int32) {
	n := len(e.groups)
	if in.rank == nil {
		in.rank = make([][]int32, n)
	}
	for d, g := range e.groups {
		if !g.granular || len(g.res) == 0 {
			continue
		}
		if in.rank[d] == nil {
			in.rank[d] = e.pairRank(g)
		}
		rank := in.rank[d]
		slices.SortStableFunc(e.opts[d], func(a, b option) int { return cmp.Compare(rank[a.single], rank[b.single]) })
	}
	in.idx = append(in.idx[:0], make([]int, n)...)
	in.slotObj = in.slotObj[:0]
	for range n * len(e.slotInfo) {
		in.slotObj = append(in.slotObj, -1)
	}
	for !e.stopped {
		in.product(e, r)
		k := n - 1
		for ; k >= 0; k-- {
			in.idx[k]++
			if in.idx[k] < len(e.opts[k]) {
				break
			}
			in.idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// product folds one product and records it when it passes.
func (in *inflation) product(e *engine, r int32) {
	for d := range e.groups {
		e.chosen[d] = int32(in.idx[d])
	}
	if !e.isolatedOK() {
		return
	}
	for d := range e.groups {
		if !e.sameSubtreeOK(d) {
			return
		}
	}
	in.cur = in.cur[:0]
	for d, g := range e.groups {
		o := &e.opts[d][in.idx[d]]
		for k := o.a0; k < o.a1; k++ {
			a := &e.allocBuf[k]
			if i := in.held(a); i >= 0 {
				in.cur[i].add += a.Amount
				continue
			}
			in.cur = append(in.cur, inflEntry{a.Provider, a.Class, in.object(e, d, g, k), e.refBuf[k].inv, 0})
		}
	}
	// Placement folds before its capacity check, so a product that fails
	// it still grows the objects; with WideTrees the check comes first.
	if !e.opt.WideTrees {
		in.fold()
	}
	for _, x := range in.cur {
		if amt := in.amt[x.obj] + x.add; x.inv.Used*e.useUsed+amt > x.inv.Capacity || amt > x.inv.MaxUnit {
			return
		}
	}
	if e.opt.WideTrees {
		in.fold()
	}
	// Sorted by provider, then class (a handful of entries).
	for i := 1; i < len(in.cur); i++ {
		for j := i; j > 0 && (in.cur[j].prov < in.cur[j-1].prov || in.cur[j].prov == in.cur[j-1].prov && in.cur[j].class < in.cur[j-1].class); j-- {
			in.cur[j], in.cur[j-1] = in.cur[j-1], in.cur[j]
		}
	}
	allocs := e.cur.Allocs[:0]
	for _, x := range in.cur {
		allocs = append(allocs, Alloc{x.prov, x.class, 0})
	}
	e.cur.Allocs = allocs
	if e.excludeNested && e.nestedInOne(allocs) {
		return
	}
	objs := in.ents.take(len(in.cur))
	for i, x := range in.cur {
		objs[i] = x.obj
	}
	in.recs = append(in.recs, inflRecord{len(e.cands), objs})
	if e.breadth {
		e.curRank = e.productRank()
	}
	e.emitted++
	e.record(r)
}

// fold adds the current product's later amounts into their objects.
func (in *inflation) fold() {
	for i := range in.cur {
		in.amt[in.cur[i].obj] += in.cur[i].add
		in.cur[i].add = 0
	}
}

// held returns the entry of the product being folded that already has
// a's provider and class, or -1.
func (in *inflation) held(a *Alloc) int {
	for i := range in.cur {
		if in.cur[i].prov == a.Provider && in.cur[i].class == a.Class {
			return i
		}
	}
	return -1
}

// object returns the id of the object holding group d's allocation
// allocBuf[k] at the current anchor, created at the group's own amount.
// Only a granular group's sharing provider keeps its object from anchor
// to anchor; every other object lives at one anchor.
func (in *inflation) object(e *engine, d int, g *group, k int32) int32 {
	a := &e.allocBuf[k]
	if g.granular && e.s.Providers[a.Provider].Sharing {
		key := objKey{int32(d), a.Provider, a.Class}
		id, ok := in.objs[key]
		if !ok {
			id = in.newObject(a.Amount)
			in.objs[key] = id
		}
		return id
	}
	i := d*len(e.slotInfo) + int(e.refBuf[k].slot)
	if in.slotObj[i] < 0 {
		in.slotObj[i] = in.newObject(a.Amount)
	}
	return in.slotObj[i]
}

func (in *inflation) newObject(amount int64) int32 {
	in.amt = append(in.amt, amount)
	return int32(len(in.amt) - 1)
}

// settle gives every recorded candidate its objects' final amounts.
// Candidates of the ordinary search hold no folded object except a
// granular group's sharing provider, folded at another anchor.
func (in *inflation) settle(e *engine) {
	if len(in.amt) == 0 {
		return
	}
	next := 0 // in.recs[next] is the next recorded candidate
	for i := range e.cands {
		c := &e.cands[i]
		if next < len(in.recs) && in.recs[next].cand == i {
			for j, obj := range in.recs[next].objs {
				c.Allocs[j].Amount = in.amt[obj]
			}
			next++
			continue
		}
		if len(in.objs) == 0 {
			continue
		}
		for j := range c.Allocs {
			a := &c.Allocs[j]
			if !e.s.Providers[a.Provider].Sharing {
				continue
			}
			for d, g := range e.groups {
				if !slices.Contains(c.Mappings[d], a.Provider) || !slices.ContainsFunc(g.res, func(ra resAmt) bool { return ra.class == a.Class }) {
					continue
				}
				if id, ok := in.objs[objKey{int32(d), a.Provider, a.Class}]; ok && g.granular {
					a.Amount = in.amt[id]
				}
				break
			}
		}
	}
}

// pairRank numbers the providers by their place in the iteration of
// get_providers_with_resource's set for g's last class.
func (e *engine) pairRank(g *group) []int32 {
	rank := make([]int32, len(e.s.Providers))
	for n, p := range e.pairOrder(g) {
		rank[p] = int32(n)
	}
	return rank
}

// pairOrder lists the providers of get_providers_with_resource's set for
// g's last class in the set's iteration order.
func (e *engine) pairOrder(g *group) []int32 {
	ps := e.s.Providers
	ra := g.res[len(g.res)-1]
	set := (&pyfmt.SetPool{}).NewSet()
	for _, p := range e.s.ByClass[ra.class] {
		if g.inTree >= 0 && ps[p].Root != g.inTree || !e.s.Inventory(p, ra.class).Fits(ra.amount) {
			continue
		}
		set.Add(pyfmt.Tuple{A: ps[p].ID, B: ps[ps[p].Root].ID, N: 2, PA: p, PB: ps[p].Root})
	}
	out := make([]int32, 0, set.Len())
	set.Each(func(k *pyfmt.Tuple) { out = append(out, k.PA) })
	return out
}
