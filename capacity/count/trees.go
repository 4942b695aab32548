package count

import "github.com/placement-syncd/placement-syncd/placementsrv/candidates"

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
	for _, st := range t.steps {
		i := st.i
		r := w.s.Roots[i]
		if st.replay {
			for _, x := range t.p.totals {
				d.Use(r, x.class, t.counts[i]*x.total)
			}
			continue
		}
		if st.shared {
			w.countShared(t, i)
			continue
		}
		if w.reason[i] != "" {
			m := d.Mark()
			w.release(r)
			released := w.claims(t.p, r)
			d.Undo(m)
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

// release gives back, on the draft, the held-back inventories of root
// r's tree.
func (w *world) release(r int32) {
	s := w.draft.Snapshot()
	for _, q := range s.Providers[r].Tree {
		for _, inv := range s.Inventories(q) {
			if heldBack(&inv) {
				w.draft.Release(q, inv.Class)
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
	d := w.draft
	s := d.Snapshot()
	var n int64
	for {
		got := false
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
		k := int64(1)
		if p.batch {
			k = -1
			for _, a := range w.claim {
				inv := s.Inventory(a.Provider, a.Class)
				if m := (inv.Capacity - inv.Used) / a.Amount; k < 0 || m < k {
					k = m
				}
			}
		}
		for _, a := range w.claim {
			d.Use(a.Provider, a.Class, k*a.Amount)
		}
		n += k
	}
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
