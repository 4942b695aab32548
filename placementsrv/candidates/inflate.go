package candidates

import (
	"cmp"
	"slices"
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
// checked in Placement's order (groups in request order, each group's
// requests in our option order). While no object outgrows its
// inventory, that order changes nothing; once one does, which products
// pass depends on it, and upstream's own order of the unsuffixed group's
// requests follows Python's per-process string hashes (DESIGN.md).
type inflation struct {
	un   int                // position of the unsuffixed group
	objs map[objKey]int32   // allocation objects by identity
	amt  []int64            // each object's current amount
	ents arena[inflEntry]   // entries of the recorded candidates
	recs map[int]inflRecord // by candidate index: its entries
	cur  []inflEntry        // scratch: the product being folded
	idx  []int              // scratch: the product's option per group
	// rank orders each granular group's options as Placement lists its
	// requests: by the provider's place in the Python set of (provider,
	// root) pairs its last class's capacity query returned (ints only, so
	// the same in every process).
	rank [][]int32
}

// objKey names one of Placement's allocation objects.
type objKey struct{ group, anchor, prov, class int32 }

// inflEntry is one allocation of a folded candidate and its object.
type inflEntry struct {
	prov, class, obj int32
	inv              *SnapInventory
}

// inflRecord holds a simulated candidate's entries.
type inflRecord struct{ ents []inflEntry }

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
				return &inflation{un: un, objs: map[objKey]int32{}, recs: map[int]inflRecord{}}
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
		for k, a := range e.allocBuf[o.a0:o.a1] {
			if i := slices.IndexFunc(in.cur, func(x inflEntry) bool { return x.prov == a.Provider && x.class == a.Class }); i >= 0 {
				in.amt[in.cur[i].obj] += a.Amount
				continue
			}
			in.cur = append(in.cur, inflEntry{a.Provider, a.Class, in.object(d, g, r, a), e.refBuf[int(o.a0)+k].inv})
		}
	}
	for _, x := range in.cur {
		if amt := in.amt[x.obj]; x.inv.Used+amt > x.inv.Capacity || amt > x.inv.MaxUnit {
			return
		}
	}
	slices.SortFunc(in.cur, func(a, b inflEntry) int {
		return cmp.Or(cmp.Compare(a.prov, b.prov), cmp.Compare(a.class, b.class))
	})
	allocs := e.cur.Allocs[:0]
	for _, x := range in.cur {
		allocs = append(allocs, Alloc{x.prov, x.class, 0})
	}
	e.cur.Allocs = allocs
	if e.excludeNested && e.nestedInOne(allocs) {
		return
	}
	in.recs[len(e.cands)] = inflRecord{ents: append(in.ents.take(len(in.cur))[:0], in.cur...)}
	e.emitted++
	e.record(r)
}

// object returns the id of the object holding group d's allocation a at
// anchor r, created at the group's own amount.
func (in *inflation) object(d int, g *group, r int32, a Alloc) int32 {
	key := objKey{int32(d), -1, a.Provider, a.Class}
	if !g.granular {
		key.anchor = r
	}
	id, ok := in.objs[key]
	if !ok {
		id = int32(len(in.amt))
		in.objs[key] = id
		in.amt = append(in.amt, a.Amount)
	}
	return id
}

// settle gives every recorded candidate its objects' final amounts.
// Candidates of the ordinary search hold no folded object except a
// granular group's sharing provider, folded at another anchor.
func (in *inflation) settle(e *engine) {
	if len(in.amt) == 0 {
		return
	}
	for i := range e.cands {
		c := &e.cands[i]
		if rec, ok := in.recs[i]; ok {
			for j, x := range rec.ents {
				c.Allocs[j].Amount = in.amt[x.obj]
			}
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
				if id, ok := in.objs[objKey{int32(d), -1, a.Provider, a.Class}]; ok && g.granular {
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
	ps := e.s.Providers
	ra := g.res[len(g.res)-1]
	set := (&pypool{}).newSet()
	for _, p := range e.s.ByClass[ra.class] {
		if g.inTree >= 0 && ps[p].Root != g.inTree || !fits(ps[p].Inventory(ra.class), ra.amount) {
			continue
		}
		set.add(pytuple{a: ps[p].ID, b: ps[ps[p].Root].ID, n: 2, pa: p, pb: ps[p].Root})
	}
	rank := make([]int32, len(ps))
	n := int32(0)
	set.each(func(k *pytuple) {
		rank[k.pa] = n
		n++
	})
	return rank
}
