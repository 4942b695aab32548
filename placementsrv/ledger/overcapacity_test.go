package ledger

import (
	"context"
	"errors"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestCapacityRules: two consumers hold 7 VCPU each of 10 at ratio 2,
// then the ratio drops to 1. Under CapacityStrict every write that leaves
// the provider over capacity fails; under CapacityNoWorse a write may
// leave it over capacity when it uses no more than before.
func TestCapacityRules(t *testing.T) {
	ctx := context.Background()
	on := func(n int64) []store.Allocation {
		return []store.Allocation{{ProviderUUID: rpUUID, ResourceClass: "VCPU", Used: n}}
	}
	req := func(c string, n int64) store.ConsumerAllocations {
		r := alReq(c, nil, on(n)...)
		r.CheckGeneration = false
		return r
	}
	for _, tc := range []struct {
		rule  store.CapacityRule
		wants []bool // success of each write below
	}{
		{store.CapacityStrict, []bool{false, false, false, false}},
		{store.CapacityNoWorse, []bool{false, true, false, true}},
	} {
		l, _ := newTestLedger(t)
		vcpu := inv("VCPU", 10)
		vcpu.AllocationRatio = 2
		if _, _, err := l.SetInventories(ctx, rpUUID, 0, []store.Inventory{vcpu}); err != nil {
			t.Fatal(err)
		}
		if err := l.ReplaceAllocationsUnder(ctx, tc.rule, []store.ConsumerAllocations{req(alConsumerA, 7), req(alConsumerB, 7)}); err != nil {
			t.Fatal(err)
		}
		vcpu.AllocationRatio = 1
		if _, _, err := l.SetInventories(ctx, rpUUID, 2, []store.Inventory{vcpu}); err != nil {
			t.Fatal(err)
		}
		writes := [][]store.ConsumerAllocations{
			{req(alConsumerA, 8)},                      // worse: 15 > 14
			{req(alConsumerA, 6)},                      // better: 13
			{req(alConsumerA, 7), req(alConsumerB, 7)}, // worse than 13 again
			{req(alConsumerA, 6), req(alConsumerB, 6)}, // 12
		}
		for i, w := range writes {
			err := l.ReplaceAllocationsUnder(ctx, tc.rule, w)
			if (err == nil) != tc.wants[i] {
				t.Errorf("rule %d, write %d: error %v, want success %v", tc.rule, i, err, tc.wants[i])
			}
			if err != nil && !errors.Is(err, store.ErrCapacityExceeded) {
				t.Errorf("rule %d, write %d: %v is not ErrCapacityExceeded", tc.rule, i, err)
			}
		}
	}
}

// TestNoWorseNeedsPriorUsage: a class without usage before the write has
// no allowance, even under CapacityNoWorse.
func TestNoWorseNeedsPriorUsage(t *testing.T) {
	ctx := context.Background()
	l, _ := newTestLedger(t)
	if _, _, err := l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 4)}); err != nil {
		t.Fatal(err)
	}
	r := alReq(alConsumerA, nil, store.Allocation{ProviderUUID: rpUUID, ResourceClass: "VCPU", Used: 4})
	r.CheckGeneration = false
	r.Allocations[0].Used = 5
	if err := l.ReplaceAllocationsUnder(ctx, store.CapacityNoWorse, []store.ConsumerAllocations{r}); !errors.Is(err, store.ErrCapacityExceeded) {
		t.Errorf("5 of 4 with no usage before: %v, want ErrCapacityExceeded", err)
	}
}
