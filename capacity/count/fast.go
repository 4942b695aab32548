package count

import "github.com/placement-syncd/placement-syncd/placementsrv/readmodel"

// The closed form. When each class the flavor asks for is held by one
// provider of a root's tree only, and by no sharing provider the root can
// draw from, the root has one candidate at most, the same after every
// claim: each group takes its classes from their holders. It fits k more
// times, k the least over classes of (capacity - used) / (what the
// groups ask of it together), once the candidate is possible at all:
// root_required, each group's traits (a granular group's on its one
// provider, the unsuffixed group's required ones on any of the providers
// it takes from and its forbidden ones on none), group_policy=isolate,
// and each amount's min_unit, max_unit and step_size, their total's
// max_unit. Any other root is counted by the engine (trees.go).

// countFlat counts the roots the closed form can, and lists the others
// in w.trees. When the claims of every root matter to the others (the
// plan cannot batch: which anchor keeps a sharing-only option follows
// every provider's usage), the roots it counted are listed too, for
// countTrees to take their claims in order.
func (w *world) countFlat(p *plan) {
	ps := w.s.Providers
	w.trees = w.trees[:0]
	var holders [8]int32
	for i, r := range w.s.Roots {
		root := &ps[r]
		if !hasAll(root, p.rootReq) || hasAny(root, p.rootForb) {
			continue
		}
		h, ok := w.holders(p, r, holders[:0])
		if !ok {
			w.trees = append(w.trees, int32(i))
			continue
		}
		if h == nil {
			continue
		}
		w.counts[i] = w.closed(p, h, false)
		if !p.batch && w.counts[i] > 0 {
			w.trees = append(w.trees, int32(i))
		}
		if w.reason[i] != "" {
			w.held[i] = max(w.closed(p, h, true)-w.counts[i], 0)
		}
	}
}

// holders returns, per entry of p.totals, the one provider of root r's
// tree holding the class; nil when a class has none (no candidate);
// false when the engine must count r: a class with several holders, or
// one a sharing provider offers it (the roots drawing from a sharing
// provider count in order).
func (w *world) holders(p *plan, r int32, out []int32) ([]int32, bool) {
	s := w.s
	root := &s.Providers[r]
	if len(root.Tree) == 1 && !root.Sharing && (!p.shared || !w.drawsShared(p, root.SharedTo)) {
		invs := s.Inventories(r)
		k := 0
		for range p.totals {
			out = append(out, r)
		}
		for _, t := range p.totals {
			for k < len(invs) && invs[k].Class < t.class {
				k++
			}
			if k == len(invs) || invs[k].Class != t.class {
				return nil, true
			}
		}
		return out, true
	}
	if p.shared && w.drawsShared(p, root.SharedTo) {
		return nil, false
	}
	for _, t := range p.totals {
		h := int32(-1)
		for _, q := range root.Tree {
			if s.Inventory(q, t.class) == nil {
				continue
			}
			if h >= 0 || s.Providers[q].Sharing {
				return nil, false
			}
			h = q
		}
		if h < 0 {
			return nil, true
		}
		out = append(out, h)
	}
	return out, true
}

// drawsShared reports whether a sharing provider of sharing holds a
// class p asks for.
func (w *world) drawsShared(p *plan, sharing []int32) bool {
	for _, q := range sharing {
		for _, t := range p.totals {
			if w.s.Inventory(q, t.class) != nil {
				return true
			}
		}
	}
	return false
}

// closed is the closed form on holders h (by p.totals entry), with the
// held-back inventories released when release is set.
func (w *world) closed(p *plan, h []int32, release bool) int64 {
	if !w.placeable(p, h) {
		return 0
	}
	k := int64(-1)
	for j, t := range p.totals {
		inv := w.s.Inventory(h[j], t.class)
		if t.total > inv.MaxUnit || inv.StepSize <= 0 {
			return 0
		}
		for _, a := range t.amounts {
			if a < inv.MinUnit || a%inv.StepSize != 0 {
				return 0
			}
		}
		capacity := inv.Capacity
		if release && heldBack(inv) {
			capacity = int64(float64(inv.Total) * inv.AllocationRatio)
		}
		n := (capacity - inv.Used) / t.total
		if n <= 0 {
			return 0
		}
		if k < 0 || n < k {
			k = n
		}
	}
	return k
}

// placeable checks the groups' traits and isolation on holders h.
func (w *world) placeable(p *plan, h []int32) bool {
	ps := w.s.Providers
	var used [8]int32
	granular := used[:0]
	for gi := range p.groups {
		g := &p.groups[gi]
		first := h[p.slot(g.res[0].class)]
		var provs [8]int32
		mine := provs[:0]
		for _, a := range g.res {
			q := h[p.slot(a.class)]
			if g.granular && q != first {
				return false
			}
			if hasAny(&ps[q], g.forbid) {
				return false
			}
			mine = append(mine, q)
		}
		for _, anyOf := range g.required {
			if !anyHolds(ps, mine, anyOf) {
				return false
			}
		}
		if g.granular && p.isolate {
			for _, q := range granular {
				if q == first {
					return false
				}
			}
			granular = append(granular, first)
		}
	}
	return true
}

// slot is the position of class c in p.totals.
func (p *plan) slot(c int32) int {
	for j := range p.totals {
		if p.totals[j].class == c {
			return j
		}
	}
	return -1
}

// anyHolds reports whether one of provs has one of traits.
func anyHolds(ps []readmodel.SnapProvider, provs []int32, traits []int32) bool {
	for _, q := range provs {
		if ps[q].HasAnyTrait(traits) {
			return true
		}
	}
	return false
}

func hasAll(p *readmodel.SnapProvider, traits []int32) bool {
	for _, t := range traits {
		if !p.HasTrait(t) {
			return false
		}
	}
	return true
}

func hasAny(p *readmodel.SnapProvider, traits []int32) bool { return p.HasAnyTrait(traits) }
