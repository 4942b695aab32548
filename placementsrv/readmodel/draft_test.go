package readmodel

import "testing"

// twinWorld is a root with two identical leaf children holding VCPU.
func twinWorld() *Snapshot {
	b := NewSnapshotBuilder(1, 3)
	vcpu := b.Class("VCPU")
	inv := func(total, reserved int64) []SnapInventory {
		return []SnapInventory{{Class: vcpu, Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total, StepSize: 1,
			AllocationRatio: 2, Capacity: (total - reserved) * 2}}
	}
	b.AddProvider(SnapProvider{UUID: "root"}, ProviderState{})
	b.AddProvider(SnapProvider{UUID: "a"}, ProviderState{Inventories: inv(4, 4)})
	b.AddProvider(SnapProvider{UUID: "b"}, ProviderState{Inventories: inv(4, 4)})
	return b.Finish(func(i int) int32 {
		if i == 0 {
			return -1
		}
		return 0
	})
}

// TestDraft checks that a draft's changes show in its snapshot only,
// keep twins right, and go back with Undo.
func TestDraft(t *testing.T) {
	s := twinWorld()
	if s.State(2).Twin != 1 {
		t.Fatalf("b's twin %d, want a (1)", s.State(2).Twin)
	}
	d := s.NewDraft()
	ds := d.Snapshot()
	d.Release(1, 0)
	if inv := ds.Inventory(1, 0); inv.Reserved != 0 || inv.Capacity != 8 {
		t.Fatalf("released inventory %+v", inv)
	}
	m := d.Mark()
	d.Use(1, 0, 3)
	if got := ds.Inventory(1, 0).Used; got != 3 {
		t.Fatalf("used %d, want 3", got)
	}
	if ds.State(2).Twin != 2 {
		t.Fatalf("b still a's twin after a changed")
	}
	if inv := s.Inventory(1, 0); inv.Used != 0 || inv.Reserved != 4 {
		t.Fatalf("the snapshot changed: %+v", inv)
	}
	d.Undo(m)
	if inv := ds.Inventory(1, 0); inv.Used != 0 || inv.Reserved != 0 {
		t.Fatalf("after Undo(mark) %+v", inv)
	}
	d.Undo(0)
	if inv := ds.Inventory(1, 0); inv.Reserved != 4 || inv.Capacity != 0 || ds.State(2).Twin != 1 {
		t.Fatalf("after Undo(0) %+v, b's twin %d", inv, ds.State(2).Twin)
	}
}
