package candidates

import "slices"

// anchorOK applies root_required to a root.
func (e *engine) anchorOK(r int32) bool {
	p := &e.s.Providers[r]
	return hasAll(p, e.anchorReq) && !p.HasAnyTrait(e.anchorForb)
}

// lacksGranular reports that no provider anchor r can draw from has the
// required traits of some granular group: that group has no option there,
// which is known without numbering the anchor's providers.
func (e *engine) lacksGranular(r int32) bool {
	ps := e.s.Providers
	held := func(provs []int32, required [][]int32) bool {
		for _, p := range provs {
			if holdsRequired(&ps[p], required) {
				return true
			}
		}
		return false
	}
	for _, g := range e.groups {
		if g.granular && len(g.required) > 0 && !held(ps[r].Tree, g.required) && !held(ps[r].SharedTo, g.required) {
			return true
		}
	}
	return false
}

// narrowAnchors returns the only roots that can anchor a candidate when
// some group's member_of or in_tree, or a rare class, confines it (nil:
// any root). A group with member_of only has options under the roots of
// its member providers and the roots its sharing members anchor; with
// in_tree, under that tree's root and the roots its sharing providers
// anchor; asking for a class, under the roots of its providers and the
// roots its sharing providers anchor.
func (e *engine) narrowAnchors() []int32 {
	ps := e.s.Providers
	var cur []int32 // sorted roots allowed so far; nil: no restriction yet
	restricted := false
	reach := func(out []int32, p int32) []int32 {
		out = append(out, ps[p].Root)
		if ps[p].Sharing {
			out = append(out, ps[p].Anchors...)
		}
		return out
	}
	restrict := func(next []int32) {
		slices.Sort(next)
		next = slices.Compact(next)
		if !restricted {
			cur, restricted = next, true
			return
		}
		kept := cur[:0]
		for _, r := range cur {
			if _, ok := slices.BinarySearch(next, r); ok {
				kept = append(kept, r)
			}
		}
		cur = kept
	}
	for _, g := range e.groups {
		if g.memberOf != nil {
			next := make([]int32, 0, len(g.memberOf))
			for _, p := range g.memberOf {
				next = reach(next, p)
			}
			restrict(next)
		}
		if g.inTree >= 0 && len(g.res) > 0 {
			var next []int32
			for _, p := range ps[g.inTree].Tree {
				next = reach(next, p)
			}
			restrict(next)
		}
	}
	// Every group must get each class it asks for from the anchor's tree
	// or a sharing provider it anchors. A class few providers have (a
	// GPU, an FPGA, a wide host's PCI functions) confines the anchors to
	// their roots; a common one would cost more to list than it saves.
	if rare := e.rarestClass(); rare != nil && len(rare) <= len(ps)/rareClassShare {
		next := make([]int32, 0, len(rare))
		for _, p := range rare {
			next = reach(next, p)
		}
		restrict(next)
	}
	if !restricted {
		return nil
	}
	if cur == nil {
		cur = []int32{}
	}
	return cur
}

// rareClassShare: a requested class confines the anchors when at most one
// provider in this many has it.
const rareClassShare = 16

// rarestClass returns the providers of the requested class that the
// fewest providers have, nil when no group asks for resources.
func (e *engine) rarestClass() []int32 {
	var rare []int32
	found := false
	for _, g := range e.groups {
		for _, ra := range g.res {
			if l := e.s.ByClass[ra.class]; !found || len(l) < len(rare) {
				rare, found = l, true
			}
		}
	}
	if !found {
		return nil
	}
	if rare == nil {
		rare = []int32{}
	}
	return rare
}

// enterAnchor numbers the providers anchor r can draw from and their
// inventories, and empties the option buffers.
func (e *engine) enterAnchor(r int32) {
	ps := e.s.Providers
	e.anchor = r
	e.allocBuf, e.refBuf, e.provBuf, e.lprovBuf = e.allocBuf[:0], e.refBuf[:0], e.provBuf[:0], e.lprovBuf[:0]
	e.aprov = append(append(e.aprov[:0], ps[r].Tree...), ps[r].SharedTo...)
	e.nTree = len(ps[r].Tree)
	// Slots follow provider index order, whatever the local order.
	e.order = e.order[:0]
	for lp, p := range e.aprov {
		e.order = append(e.order, int32(lp))
		for j := len(e.order) - 1; j > 0 && e.aprov[e.order[j-1]] > p; j-- {
			e.order[j], e.order[j-1] = e.order[j-1], e.order[j]
		}
	}
	e.abase = append(e.abase[:0], e.order...) // sized; filled below
	e.slotInfo = e.slotInfo[:0]
	for _, lp := range e.order {
		p := e.aprov[lp]
		e.abase[lp] = int32(len(e.slotInfo))
		invs, root := e.s.Inventories(p), ps[p].Root
		for k := range invs {
			e.slotInfo = append(e.slotInfo, slotInfo{p, invs[k].Class, root})
		}
	}
	n := len(e.slotInfo)
	if n > len(e.slots) {
		e.slots = append(e.slots, make([]slotUse, n-len(e.slots))...)
	}
	if w := (n + 63) / 64; w > len(e.inUse) {
		e.inUse = append(e.inUse, make([]uint64, w-len(e.inUse))...)
	}
	if len(e.aprov) > len(e.puse) {
		e.puse = append(e.puse, make([]provUse, len(e.aprov)-len(e.puse))...)
	}
}

// addAlloc appends an allocation of lp's inventory k to the option
// buffers.
func (e *engine) addAlloc(lp int32, k int, class int32, amount int64) {
	p := e.aprov[lp]
	e.allocBuf = append(e.allocBuf, Alloc{p, class, amount})
	e.refBuf = append(e.refBuf, allocRef{e.abase[lp] + int32(k), &e.s.Inventories(p)[k]})
}
