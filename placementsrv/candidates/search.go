package candidates

import "slices"

// run generates candidates anchor by anchor.
func (e *engine) run() {
	roots := e.s.Roots
	if narrow := e.narrowAnchors(); narrow != nil {
		roots = narrow
	}
	if e.upstream {
		roots = e.upstreamRoots(roots)
	}
	flat := e.flatGroup()
	for _, r := range roots {
		if e.stopped {
			break
		}
		if e.keep == nil {
			start := len(e.cands)
			e.runAnchor(r, flat)
			if e.breadth {
				e.mergeBreadth(start)
			}
			continue
		}
		if e.keep.replay(e, r) {
			continue
		}
		e.keep.begin(e)
		e.runAnchor(r, flat)
		e.keep.end(e, r)
	}
	if e.infl != nil {
		e.infl.settle(e)
	}
}

// runAnchor generates anchor r's candidates; flat is the request's
// flatGroup.
func (e *engine) runAnchor(r int32, flat *group) {
	if !e.anchorOK(r) || e.lacksGranular(r) || flat != nil && e.flatAnchor(flat, r) {
		return
	}
	e.enterAnchor(r)
	for _, i := range e.optOrder {
		e.opts[i] = e.options(e.groups[i], r, e.opts[i][:0])
		if len(e.opts[i]) == 0 {
			return
		}
	}
	if e.upstream {
		e.sortOptions()
	}
	e.rootEmit, e.prodCount = 0, 0
	if e.infl != nil && e.infl.folds(e) {
		e.infl.anchor(e, r)
		return
	}
	e.search(0, r)
}

// search assigns an option to the group at depth d and recurses. It
// returns true when generation must stop for this anchor.
func (e *engine) search(d int, r int32) bool {
	if d == len(e.groups) {
		return e.leaf(r)
	}
	g := e.groups[d]
	opts := e.opts[d]
	isolate := e.isolate && g.granular && !e.countCap
	var failedBuf [8]int32
	failed := failedBuf[:0]
	for i := range opts {
		o := &opts[i]
		if isolate && e.puse[o.lsingle].gran > 0 {
			continue
		}
		twin := int32(-1)
		if o.single >= 0 && e.puse[o.lsingle].touch == 0 && !e.countCap {
			twin = e.s.State(o.single).Twin
			if slices.Contains(failed, twin) {
				continue
			}
		}
		if !e.take(o) {
			continue
		}
		e.touch(o, 1)
		if g.granular {
			e.puse[o.lsingle].gran++
		}
		e.chosen[d] = int32(i)
		before := e.emitted
		stop := false
		if e.countCap || e.sameSubtreeOK(d) {
			stop = e.search(d+1, r)
		}
		if g.granular {
			e.puse[o.lsingle].gran--
		}
		e.touch(o, -1)
		e.release(o, o.a1-o.a0)
		if stop {
			return true
		}
		if twin >= 0 && e.emitted == before {
			failed = append(failed, twin)
		}
	}
	return false
}

// leaf takes a complete assignment; it returns true when generation must
// stop for this anchor.
func (e *engine) leaf(r int32) bool {
	if !e.breadth {
		return e.emit(r)
	}
	if e.countCap {
		e.curRank = e.prodCount
		e.prodCount++
	} else {
		e.curRank = e.productRank()
	}
	if e.curRank >= e.rankBound {
		return true
	}
	if e.countCap && !e.filtersOK() {
		return false
	}
	return e.emit(r)
}

// filtersOK applies the checks the search defers when counting products.
func (e *engine) filtersOK() bool {
	if !e.isolatedOK() {
		return false
	}
	for d := range e.groups {
		if !e.sameSubtreeOK(d) {
			return false
		}
	}
	return true
}

// isolatedOK applies group_policy=isolate to the chosen options: the
// granular groups' providers are all different.
func (e *engine) isolatedOK() bool {
	if !e.isolate {
		return true
	}
	for d, g := range e.groups {
		if !g.granular {
			continue
		}
		p := e.opts[d][e.chosen[d]].single
		for d2 := range d {
			if e.groups[d2].granular && e.opts[d2][e.chosen[d2]].single == p {
				return false
			}
		}
	}
	return true
}

// touch counts (delta 1) or uncounts (-1) an option's mapping providers.
func (e *engine) touch(o *option, delta int32) {
	ps := e.s.Providers
	for j := o.p0; j < o.p1; j++ {
		e.puse[e.lprovBuf[j]].touch += delta
		if !ps[e.provBuf[j]].Sharing {
			e.nonShared += int(delta)
		}
	}
}

// take adds an option's allocations to the running totals, checking the
// combined amount against capacity (less usage, unless WideTrees) and
// max_unit; on failure nothing is taken.
func (e *engine) take(o *option) bool {
	allocs := e.allocBuf[o.a0:o.a1]
	for k := range allocs {
		ref := &e.refBuf[int(o.a0)+k]
		su := &e.slots[ref.slot]
		total := su.total + allocs[k].Amount
		if ref.inv.Used*e.useUsed+total > ref.inv.Capacity || total > ref.inv.MaxUnit {
			e.release(o, int32(k))
			return false
		}
		su.total = total
		if su.users == 0 {
			e.inUse[ref.slot/64] |= 1 << (ref.slot % 64)
		}
		su.users++
	}
	return true
}

// release gives back the first n allocations of o.
func (e *engine) release(o *option, n int32) {
	for k := o.a0 + n - 1; k >= o.a0; k-- {
		su := &e.slots[e.refBuf[k].slot]
		su.total -= e.allocBuf[k].Amount
		if su.users--; su.users == 0 {
			e.inUse[e.refBuf[k].slot/64] &^= 1 << (e.refBuf[k].slot % 64)
		}
	}
}

// sameSubtreeOK checks the same_subtree sets completed at depth d: one of
// the providers of the set's groups must be an ancestor-or-self of all.
func (e *engine) sameSubtreeOK(d int) bool {
	for _, si := range e.subtrees[d] {
		set := e.sets[si]
		var buf [16]int32
		provs := buf[:0]
		for _, gi := range set {
			o := &e.opts[gi][e.chosen[gi]]
			for _, p := range e.provBuf[o.p0:o.p1] {
				if !slices.Contains(provs, p) {
					provs = append(provs, p)
				}
			}
		}
		if !e.hasCommonTop(provs) {
			return false
		}
	}
	return true
}

func (e *engine) hasCommonTop(provs []int32) bool {
	if len(provs) <= 1 {
		return true
	}
	ps := e.s.Providers
top:
	for _, t := range provs {
		for _, q := range provs {
			for q != t && q >= 0 {
				q = ps[q].Parent
			}
			if q != t {
				continue top
			}
		}
		return true
	}
	return false
}
