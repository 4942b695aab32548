package count

import "github.com/placement-syncd/placement-syncd/placementsrv/candidates"

// countTrees counts, in ascending root order, the roots the closed form
// cannot: the engine's first candidate at the root is claimed on the
// count's draft until there is none, so that sharing providers are
// consumed in that order. A root held back is first counted with its
// held-back inventories released, that undone, then counted as it is.
// The draft is back to the snapshot at the end.
func (w *world) countTrees(p *plan) {
	if len(w.trees) == 0 {
		return
	}
	d := w.draft
	var holders [8]int32
	for _, i := range w.trees {
		r := w.s.Roots[i]
		if h, ok := w.holders(p, r, holders[:0]); ok {
			// Counted by the closed form: its claims, for the roots after.
			for j, t := range p.totals {
				d.Use(h[j], t.class, w.counts[i]*t.total)
			}
			continue
		}
		if w.reason[i] != "" {
			m := d.Mark()
			w.release(r)
			released := w.claims(p, r)
			d.Undo(m)
			w.counts[i] = w.claims(p, r)
			w.held[i] = max(released-w.counts[i], 0)
			continue
		}
		w.counts[i] = w.claims(p, r)
	}
	d.Undo(0)
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
