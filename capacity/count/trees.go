package count

import (
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// countTrees counts, in ascending root order, the roots listed for the
// engine: the engine's first candidate at the root is claimed on the
// count's draft until there is none, so that sharing providers are
// consumed in that order. A root held back is first counted with its
// held-back inventories released, that undone, then counted as it is.
// A root counted already (replay) has its claims taken on the draft.
// The draft is back to the snapshot at the end.
func (w *world) countTrees(t *tally) {
	if len(t.steps) == 0 {
		return
	}
	d := w.draft
	w.stale = true
	for _, st := range t.steps {
		i := st.i
		r := w.s.Roots[i]
		if st.replay {
			for _, x := range t.p.totals {
				w.use(t.p, r, x.class, t.counts[i]*x.total)
			}
			continue
		}
		if st.shared {
			w.countShared(t, i)
			w.stale = true
			continue
		}
		if w.reason[i] != "" {
			m, flips := d.Mark(), w.flips
			w.release(t.p, r)
			released := w.claims(t.p, r)
			d.Undo(m)
			// Undone, the changes pass the fits they passed again.
			w.stale = w.stale || w.flips != flips
			t.counts[i] = w.claims(t.p, r)
			t.held[w.heldAt[i]] = max(released-t.counts[i], 0)
			continue
		}
		t.counts[i] = w.claims(t.p, r)
	}
	d.Undo(0)
}

// countShared counts root i with the tree search over its tree and the
// sharing providers it draws from, as they stand on the draft, and takes
// its claims from those sharing providers on the draft.
func (w *world) countShared(t *tally, i int32) {
	if w.sim == nil {
		w.sim = newSim(w)
	}
	sm, d := w.sim, w.draft
	sm.load(d.Snapshot(), w.s.Roots[i], true)
	if w.reason[i] != "" {
		// Released: the same search with the held-back capacity freed;
		// the tree's own providers are not shared, the draft unchanged.
		t.held[w.heldAt[i]] = sm.count(t.p, true)
	}
	t.counts[i] = sm.countClaiming(t.p, false, func(k int64) {
		for j, a := range sm.leaf {
			if a > 0 && sm.share[j/w.ncol] {
				d.Use(sm.provs[j/w.ncol], w.colClass[j%w.ncol], k*a)
			}
		}
	})
	if w.reason[i] != "" {
		t.held[w.heldAt[i]] = max(t.held[w.heldAt[i]]-t.counts[i], 0)
	}
}

// use takes amount of class c from provider q on the draft, noting when
// q starts or stops fitting an amount p's unsuffixed group asks: which
// anchor keeps a sharing-only option follows that, and nothing else.
func (w *world) use(p *plan, q, c int32, amount int64) {
	inv := w.draft.Snapshot().Inventory(q, c)
	w.refit(p, c, inv.Capacity-inv.Used, inv.Capacity-inv.Used-amount)
	w.draft.Use(q, c, amount)
}

// refit notes whether an inventory of class c whose free amount goes
// from before to after starts or stops fitting an amount of p's
// unsuffixed group.
func (w *world) refit(p *plan, c int32, before, after int64) {
	for _, u := range p.un {
		if u.class == c && (u.n <= before) != (u.n <= after) {
			w.stale = true
			w.flips++
		}
	}
}

// release gives back, on the draft, the held-back inventories of root
// r's tree.
func (w *world) release(p *plan, r int32) {
	s := w.draft.Snapshot()
	for _, q := range s.Providers[r].Tree {
		for _, inv := range s.Inventories(q) {
			if heldBack(&inv) {
				w.draft.Release(q, inv.Class)
				after := s.Inventory(q, inv.Class)
				w.refit(p, inv.Class, inv.Capacity-inv.Used, after.Capacity-after.Used)
			}
		}
	}
}

// claims claims root r's first candidate on the draft until it has none
// and returns how many it claimed. A candidate made only of sharing
// providers belongs to no host and is passed over. When p.batch holds,
// the first candidate stays first as long as it fits (the candidates
// come in an order fixed by the providers, claims only make fewer fit),
// so it is claimed as many times as it fits at once.
func (w *world) claims(p *plan, r int32) int64 {
	s := w.draft.Snapshot()
	var n int64
	for {
		got := false
		if !w.stale {
			p.q.SameFits()
		}
		w.stale = false
		p.q.Anchor(r, func(c *candidates.Candidate) bool {
			if w.sharingOnly(c.Allocs) {
				return true
			}
			w.claim = append(w.claim[:0], c.Allocs...)
			got = true
			return false
		})
		if !got {
			return n
		}
		k := w.repeats(p, s)
		for _, a := range w.claim {
			w.use(p, a.Provider, a.Class, k*a.Amount)
		}
		n += k
	}
}

// repeats is how many times the candidate in w.claim is claimed at once:
// as many times as it fits; and, when a sharing-only option's anchor can
// change (the plan cannot batch), no further than the claim after which
// a provider stops fitting an amount of the unsuffixed group (until then
// the anchors, and so the first candidate, stay as they are).
func (w *world) repeats(p *plan, s *readmodel.Snapshot) int64 {
	k := int64(-1)
	least := func(m int64) {
		if k < 0 || m < k {
			k = m
		}
	}
	for _, a := range w.claim {
		inv := s.Inventory(a.Provider, a.Class)
		free := inv.Capacity - inv.Used
		least(free / a.Amount)
		if p.batch {
			continue
		}
		for _, u := range p.un {
			if u.class == a.Class && u.n <= free {
				least((free-u.n)/a.Amount + 1)
			}
		}
	}
	return k
}

// sharingOnly reports whether every allocation is from a sharing
// provider.
func (w *world) sharingOnly(allocs []candidates.Alloc) bool {
	for _, a := range allocs {
		if !w.s.Providers[a.Provider].Sharing {
			return false
		}
	}
	return true
}
