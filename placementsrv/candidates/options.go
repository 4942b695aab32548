package candidates

import (
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// options lists g's options at anchor r into out.
func (e *engine) options(g *group, r int32, out []option) []option {
	if g.granular {
		return e.singleOptions(g, r, out)
	}
	return e.treeOptions(g, r, out)
}

// singleOptions: one provider satisfies the whole group; it is in r's tree
// or is a sharing provider r anchors.
func (e *engine) singleOptions(g *group, r int32, out []option) []option {
	ps := e.s.Providers
	for lp, p := range e.aprov {
		// in_tree limits where resources come from; a resourceless group
		// ignores it, as Placement does.
		if len(g.res) > 0 && g.inTree >= 0 && ps[p].Root != g.inTree {
			continue
		}
		if !g.matchSingle(e.s, &ps[p], p) {
			continue
		}
		o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: p, lsingle: int32(lp)}
		for _, ra := range g.res {
			_, k := readmodel.InventoryOf(e.s.Inventories(p), ra.class)
			e.addAlloc(int32(lp), k, ra.class, ra.amount)
		}
		e.provBuf = append(e.provBuf, p)
		e.lprovBuf = append(e.lprovBuf, int32(lp))
		o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
		out = append(out, o)
	}
	return out
}

// treeOptions: the unsuffixed group, each class from any provider of r's
// tree or a sharing provider r anchors; traits are required of the chosen
// providers together.
func (e *engine) treeOptions(g *group, r int32, out []option) []option {
	ps := e.s.Providers
	if g.inTree >= 0 && r != g.inTree {
		return out
	}
	root := &ps[r]
	rootMember := g.memberOf != nil && g.member(r)
	if root.InAnyAggregate(g.badAggs) {
		return out
	}
	for len(e.lists) < len(g.res) {
		e.lists = append(e.lists, nil)
	}
	lists := e.lists[:len(g.res)]
	nProv := len(e.aprov)
	if g.inTree >= 0 {
		nProv = e.nTree
	}
	// A required trait that no provider here has rules the anchor out
	// before any per-class list is built.
	for _, anyOf := range g.required {
		held := false
		for _, p := range e.aprov[:nProv] {
			if ps[p].HasAnyTrait(anyOf) {
				held = true
				break
			}
		}
		if !held {
			return out
		}
	}
	for k, ra := range g.res {
		l := lists[k][:0]
		for lp, p := range e.aprov[:nProv] {
			pp := &ps[p]
			inv := e.s.Inventory(p, ra.class)
			if inv == nil || !inv.Fits(ra.amount) || pp.HasAnyTrait(g.forbid) || pp.InAnyAggregate(g.badAggs) {
				continue
			}
			// Tree members pass member_of through their root; sharing
			// providers must be members themselves.
			if (lp >= e.nTree || !rootMember) && !g.member(p) {
				continue
			}
			l = append(l, int32(lp))
		}
		lists[k] = l
		if len(l) == 0 {
			return out
		}
	}
	// Odometer over the per-class lists.
	idx := e.odo[:0]
	for range lists {
		idx = append(idx, 0)
	}
	e.odo = idx
	for {
		if e.requiredTogether(g, lists, idx) {
			out = e.addTreeOption(g, lists, idx, out)
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < len(lists[k]) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return out
		}
	}
}

// addTreeOption appends the unsuffixed group's option taking class k from
// local provider lists[k][idx[k]], unless it is a sharing-only one that
// another anchor keeps.
func (e *engine) addTreeOption(g *group, lists [][]int32, idx []int, out []option) []option {
	ps := e.s.Providers
	lp0 := lists[0][idx[0]]
	o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: e.aprov[lp0], lsingle: lp0}
	for k, ra := range g.res {
		lp := lists[k][idx[k]]
		p := e.aprov[lp]
		_, pos := readmodel.InventoryOf(e.s.Inventories(p), ra.class)
		e.addAlloc(lp, pos, ra.class, ra.amount)
		if lp != lp0 {
			o.single, o.lsingle = -1, -1
		}
		if !slices.Contains(e.lprovBuf[o.p0:], lp) {
			// Keep the mapping ascending by provider as it grows.
			e.provBuf = append(e.provBuf, p)
			e.lprovBuf = append(e.lprovBuf, lp)
			for j := len(e.provBuf) - 1; j > int(o.p0) && e.provBuf[j] < e.provBuf[j-1]; j-- {
				e.provBuf[j], e.provBuf[j-1] = e.provBuf[j-1], e.provBuf[j]
				e.lprovBuf[j], e.lprovBuf[j-1] = e.lprovBuf[j-1], e.lprovBuf[j]
			}
		}
	}
	o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
	o.sharedOnly = true
	for _, p := range e.provBuf[o.p0:o.p1] {
		o.sharedOnly = o.sharedOnly && ps[p].Sharing
	}
	if o.sharedOnly && e.sharedOwner(g, &o) != e.anchor {
		e.allocBuf, e.refBuf = e.allocBuf[:o.a0], e.refBuf[:o.a0]
		e.provBuf, e.lprovBuf = e.provBuf[:o.p0], e.lprovBuf[:o.p0]
		return out
	}
	return append(out, o)
}

// requiredTogether checks the group's required traits against the union
// of the traits of the chosen providers.
func (e *engine) requiredTogether(g *group, lists [][]int32, idx []int) bool {
	ps := e.s.Providers
	for _, anyOf := range g.required {
		ok := false
		for k := range lists {
			if ps[e.aprov[lists[k][idx[k]]]].HasAnyTrait(anyOf) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// optionKey identifies an option by its allocations.
func (e *engine) optionKey(o *option) string {
	allocs := e.allocBuf[o.a0:o.a1]
	return string(appendAllocsKey(make([]byte, 0, 24*len(allocs)), allocs))
}
