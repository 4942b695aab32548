package readmodel

import "slices"

// Draft is a private copy of a snapshot whose inventories its owner
// changes in place, for what-if searches that claim one candidate after
// another (capacity counts) without building a snapshot per claim. Its
// Snapshot shares everything with the original but the state chunks of
// the providers changed, which are copied on first change; Undo puts
// changes back. The draft's Snapshot must not be handed to other
// readers: unlike every other snapshot, it changes.
type Draft struct {
	snap  *Snapshot
	owned []bool // by state chunk: copied from base
	// ownInv marks the providers whose inventory slice is the draft's own.
	ownInv  map[int32]bool
	journal []change
}

// change is one inventory as it was before a change, for Undo.
type change struct {
	prov int32
	pos  int
	was  SnapInventory
}

// NewDraft starts a draft of s; s itself never changes.
func (s *Snapshot) NewDraft() *Draft {
	ns := *s
	ns.states = slices.Clone(s.states)
	return &Draft{snap: &ns, owned: make([]bool, len(s.states)), ownInv: map[int32]bool{}}
}

// Snapshot is the draft as it stands; searches read it, and see later
// changes.
func (d *Draft) Snapshot() *Snapshot { return d.snap }

// Mark is a point Undo can return to.
func (d *Draft) Mark() int { return len(d.journal) }

// Use adds amount to the usage of provider p's inventory of class c,
// which must exist.
func (d *Draft) Use(p, c int32, amount int64) {
	inv := d.own(p, c)
	inv.Used += amount
	d.retwin(p)
}

// Release sets reserved to 0 in provider p's inventory of class c, with
// the capacity Placement computes from it.
func (d *Draft) Release(p, c int32) {
	inv := d.own(p, c)
	inv.Reserved = 0
	inv.Capacity = int64(float64(inv.Total) * inv.AllocationRatio)
	d.retwin(p)
}

// Undo puts back every change made since mark, latest first.
func (d *Draft) Undo(mark int) {
	for i := len(d.journal) - 1; i >= mark; i-- {
		ch := d.journal[i]
		d.snap.State(ch.prov).Inventories[ch.pos] = ch.was
		d.retwin(ch.prov)
	}
	d.journal = d.journal[:mark]
}

// own returns p's inventory of c in the draft's own copy, journaling it.
func (d *Draft) own(p, c int32) *SnapInventory {
	st := d.ownState(p)
	if !d.ownInv[p] {
		st.Inventories = slices.Clone(st.Inventories)
		d.ownInv[p] = true
	}
	inv, pos := InventoryOf(st.Inventories, c)
	d.journal = append(d.journal, change{p, pos, *inv})
	return inv
}

// ownState copies p's state chunk on first change.
func (d *Draft) ownState(p int32) *ProviderState {
	if c := p / stateChunkSize; !d.owned[c] {
		chunk := *d.snap.states[c]
		d.snap.states[c] = &chunk
		d.owned[c] = true
	}
	return d.snap.State(p)
}

// retwin recomputes twins among p's siblings: usage is part of a twin's
// shape.
func (d *Draft) retwin(p int32) {
	par := d.snap.Providers[p].Parent
	if par < 0 {
		return
	}
	kids := d.snap.Providers[par].Children
	for _, k := range kids {
		d.ownState(k).Twin = k
	}
	siblingTwins(d.snap, kids)
}
