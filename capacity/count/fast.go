package count

import "github.com/placement-syncd/placement-syncd/placementsrv/readmodel"

// The fast paths. A root that is one provider, not sharing, and that no
// sharing provider offers a requested class, has one candidate at most,
// the same after every claim: it fits k more times, k the least over
// classes of (capacity - used) / (what the groups ask of it together),
// once the candidate is possible at all: root_required and the groups'
// traits on the root, group_policy=isolate with several granular groups
// (impossible on one provider), and each amount's min_unit, max_unit and
// step_size, their total's max_unit. A tree none of whose requested
// classes a sharing provider offers is counted by a small search of its
// own (sim.go). Roots sharing providers serve are counted in root order
// by countTrees (trees.go).
//
// Both read classes by column and traits by bit: the classes and traits
// the flavors name, interned once per Count.

// cell is one inventory of a column: what is free (capacity - used),
// and free once released when it is held back; step 0 when absent.
type cell struct {
	free, freeReleased     int64
	maxUnit, minUnit, step int64
}

// track numbers the columns and trait bits of the plans; false when the
// flavors name more than 64 of either, and the engine counts everything.
func (w *world) track(tallies []*tally) bool {
	s := w.s
	w.col = make([]int32, len(s.Classes))
	w.bit = make([]int8, len(s.Traits))
	for i := range w.col {
		w.col[i] = -1
	}
	for i := range w.bit {
		w.bit[i] = -1
	}
	w.ncol = 0
	nbit := 0
	for _, t := range tallies {
		if t == nil {
			continue
		}
		for _, x := range t.p.totals {
			if w.col[x.class] < 0 {
				w.col[x.class] = int32(w.ncol)
				w.colClass = append(w.colClass, x.class)
				w.ncol++
			}
		}
		for _, id := range t.p.traits() {
			if w.bit[id] < 0 {
				if nbit == 64 {
					return false
				}
				w.bit[id] = int8(nbit)
				nbit++
			}
		}
	}
	if w.ncol > 64 {
		return false
	}
	for _, t := range tallies {
		if t != nil {
			t.p.masks(w)
		}
	}
	return true
}

// traitMask is p's tracked traits as bits.
func (w *world) traitMask(p *readmodel.SnapProvider) uint64 {
	var m uint64
	for _, t := range p.Traits {
		if b := w.bit[t]; b >= 0 {
			m |= 1 << b
		}
	}
	return m
}

// colMask is the columns provider q has an inventory of.
func (w *world) colMask(q int32) uint64 {
	var m uint64
	for _, inv := range w.s.Inventories(q) {
		if c := w.col[inv.Class]; c >= 0 {
			m |= 1 << c
		}
	}
	return m
}

// row fills cells (w.ncol long) with provider q's inventories.
func (w *world) row(q int32, cells []cell) { w.rowIn(w.s, q, cells) }

// rowIn is row on snapshot snap (the count's draft).
func (w *world) rowIn(snap *readmodel.Snapshot, q int32, cells []cell) {
	clear(cells)
	invs := snap.Inventories(q)
	for k := range invs {
		inv := &invs[k]
		if c := w.col[inv.Class]; c >= 0 {
			cells[c] = cellOf(inv)
		}
	}
}

func cellOf(inv *readmodel.SnapInventory) cell {
	x := cell{free: inv.Capacity - inv.Used, maxUnit: inv.MaxUnit, minUnit: inv.MinUnit, step: max(inv.StepSize, 0)}
	x.freeReleased = x.free
	if heldBack(inv) {
		x.freeReleased = int64(float64(inv.Total)*inv.AllocationRatio) - inv.Used
	}
	return x
}

// countRoots counts every root for every flavor the fast paths can, in
// one pass over the roots, and lists the others in each tally's steps.
func (w *world) countRoots(tallies []*tally) {
	ps := w.s.Providers
	cells := make([]cell, w.ncol)
	sm := newSim(w)
	for i, r := range w.s.Roots {
		root := &ps[r]
		tm := w.traitMask(root)
		flat := len(root.Tree) == 1 && !root.Sharing
		var shared uint64
		for _, q := range root.SharedTo {
			shared |= w.colMask(q)
		}
		if flat {
			w.row(r, cells)
		} else {
			for _, q := range root.Tree {
				if ps[q].Sharing {
					shared |= w.colMask(q)
				}
			}
			sm.load(w.s, r, false)
		}
		held := w.reason[i] != ""
		for _, t := range tallies {
			if t == nil || !t.p.anchorOK(tm) {
				continue
			}
			p := t.p
			switch {
			case p.colMask&shared != 0 && p.batch:
				t.steps = append(t.steps, step{i: int32(i), shared: true})
			case p.colMask&shared != 0 || !flat && !p.batch:
				t.steps = append(t.steps, step{i: int32(i)})
			case flat:
				t.counts[i] = p.closed(cells, tm, false)
				if held {
					t.held[w.heldAt[i]] = max(p.closed(cells, tm, true)-t.counts[i], 0)
				}
				if !p.batch && t.counts[i] > 0 {
					t.steps = append(t.steps, step{i: int32(i), replay: true})
				}
			default:
				t.counts[i] = sm.count(p, false)
				if held {
					t.held[w.heldAt[i]] = max(sm.count(p, true)-t.counts[i], 0)
				}
			}
		}
	}
}

// closed is the closed form on a flat root's cells, with held-back
// inventories released when release is set.
func (p *plan) closed(cells []cell, tm uint64, release bool) int64 {
	if p.never || tm&p.forbAll != 0 {
		return 0
	}
	for _, cl := range p.clausesAll {
		if tm&cl == 0 {
			return 0
		}
	}
	k := int64(-1)
	for _, t := range p.cols {
		x := &cells[t.col]
		if x.step <= 0 || t.total > x.maxUnit {
			return 0
		}
		if t.least < x.minUnit {
			return 0
		}
		if x.step != 1 {
			for _, a := range t.amounts {
				if a%x.step != 0 {
					return 0
				}
			}
		}
		free := x.free
		if release {
			free = x.freeReleased
		}
		n := free / t.total
		if n <= 0 {
			return 0
		}
		if k < 0 || n < k {
			k = n
		}
	}
	return k
}
