package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// testCapacity checks the capacity and unit checks of a claim, with
// upstream's messages, and that a refused claim changes nothing.
func testCapacity(t *testing.T, s Storage) {
	e := openLedger(t, s)
	stepped := store.Inventory{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 10, Reserved: 2, MinUnit: 2, MaxUnit: 6, StepSize: 2, AllocationRatio: 1.5}}
	e.newProvider(rpUUID, stepped)
	// Capacity (10-2)*1.5 = 12, of which A holds 8.
	if err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{
		claim(consumerA, nil, on(rpUUID, "VCPU", 4), on(rpUUID, "VCPU", 4)),
	}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, e.ctx, e.l)
	const prefix = "Unable to create allocation for 'VCPU' on resource provider '" + rpUUID + "'. The requested amount would "
	for _, tc := range []struct {
		name   string
		allocs []store.Allocation
		detail string
	}{
		{"over capacity", []store.Allocation{on(rpUUID, "VCPU", 6)}, prefix + "exceed the capacity."},
		{"over capacity in one request", []store.Allocation{on(rpUUID, "VCPU", 2), on(rpUUID, "VCPU", 4)}, prefix + "exceed the capacity."},
		{"below min_unit", []store.Allocation{on(rpUUID, "VCPU", 1)}, prefix + "violate inventory constraints."},
		{"above max_unit", []store.Allocation{on(rpUUID, "VCPU", 8)}, prefix + "violate inventory constraints."},
		{"off step", []store.Allocation{on(rpUUID, "VCPU", 3)}, prefix + "violate inventory constraints."},
		{"no such inventory", []store.Allocation{on(rpUUID, "DISK_GB", 1)}, "Inventory for 'DISK_GB' on resource provider '" + rpUUID + "' invalid."},
	} {
		err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(consumerB, nil, tc.allocs...)})
		if !errors.Is(err, store.ErrCapacityExceeded) || store.Detail(err) != tc.detail {
			t.Errorf("%s: %v, want capacity exceeded %q", tc.name, err, tc.detail)
		}
		if got := dump(t, e.ctx, e.l); got != before {
			t.Fatalf("%s: refused claim changed the state:\n%s\n---\n%s", tc.name, before, got)
		}
	}
	// Freeing and taking in one request fits: 12 is the capacity.
	if err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{
		claim(consumerA, gen(1), on(rpUUID, "VCPU", 6)), claim(consumerB, nil, on(rpUUID, "VCPU", 6)),
	}); err != nil {
		t.Fatalf("claim up to the capacity: %v", err)
	}
}

// testConcurrentClaims races claims for more than a provider holds:
// exactly as many as fit win, before and after a reopen.
func testConcurrentClaims(t *testing.T, s Storage) {
	e := openLedger(t, s)
	const capacity, claims = 6, 16
	e.newProvider(rpUUID, inv("VCPU", capacity))
	errs := race(claims, func(i int) error {
		c := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i)
		return e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(c, nil, on(rpUUID, "VCPU", 1))})
	})
	won := winners(t, errs, store.ErrCapacityExceeded)
	if won != capacity {
		t.Fatalf("%d claims won, capacity %d", won, capacity)
	}
	for range 2 {
		p, usages, err := e.l.ProviderUsages(e.ctx, rpUUID)
		if err != nil || usages["VCPU"] != capacity || p.Generation != 1+capacity {
			t.Fatalf("usage %v generation %d (%v), want %d and %d", usages, p.Generation, err, capacity, 1+capacity)
		}
		e.reopen()
	}
}

// testConsumerGeneration checks consumer generation conflicts (1.28):
// concurrent writers holding the same generation, one wins; a stale or
// missing generation is refused.
func testConsumerGeneration(t *testing.T, s Storage) {
	e := openLedger(t, s)
	e.newProvider(rpUUID, inv("VCPU", 100))
	if err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(consumerA, nil, on(rpUUID, "VCPU", 1))}); err != nil {
		t.Fatal(err)
	}
	errs := race(8, func(i int) error {
		return e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(consumerA, gen(1), on(rpUUID, "VCPU", int64(2+i)))})
	})
	won := winners(t, errs, store.ErrConsumerGeneration)
	if won != 1 {
		t.Fatalf("%d writers won", won)
	}
	for _, tc := range []struct {
		g      *int64
		detail string
	}{
		{gen(1), "consumer generation conflict - expected 2 but got 1"},
		{nil, "consumer generation conflict - expected 2 but got None"},
	} {
		err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(consumerA, tc.g, on(rpUUID, "VCPU", 1))})
		if !errors.Is(err, store.ErrConsumerGeneration) || store.Detail(err) != tc.detail {
			t.Errorf("generation %v: %v, want %q", tc.g, err, tc.detail)
		}
	}
	err := e.l.ReplaceAllocations(e.ctx, []store.ConsumerAllocations{claim(consumerB, gen(0), on(rpUUID, "VCPU", 1))})
	if !errors.Is(err, store.ErrConsumerGeneration) || store.Detail(err) != "consumer generation conflict - expected null but got 0" {
		t.Errorf("new consumer with a generation: %v", err)
	}
	e.reopen()
	held, err := e.l.ConsumerAllocations(e.ctx, consumerA)
	if err != nil || held.Consumer.Generation != 2 || len(held.Allocations) != 1 {
		t.Fatalf("after reopen: %+v %v", held, err)
	}
}
