package candidates

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestResourcelessGroupNeedsPositiveFilter pins Placement 8.0.0: a
// resourceless group keeps the providers its required traits or member_of
// selected, so one with only forbidden traits or aggregates has none, and
// neither has the request (checked against the reference: both queries
// answer [] there, with candidates once the group requires a trait).
func TestResourcelessGroupNeedsPositiveFilter(t *testing.T) {
	b := readmodel.NewSnapshotBuilder(1, 2)
	ip := b.Class("IPV4_ADDRESS")
	b.Trait("HW_NIC_SRIOV")
	numa := b.Trait("HW_NUMA_ROOT")
	b.Aggregate("agg")
	b.AddProvider(readmodel.SnapProvider{ID: 1, UUID: "r", Traits: []int32{numa}}, readmodel.ProviderState{})
	b.AddProvider(readmodel.SnapProvider{ID: 2, UUID: "p"}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{{Class: ip, Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1, Capacity: 4}}})
	s := b.Finish(func(i int) int32 { return int32(i) - 1 })
	for _, tc := range []struct {
		name  string
		group Group
		want  int
	}{
		{"forbidden trait only", Group{Suffix: "_x", Forbidden: []string{"HW_NIC_SRIOV"}}, 0},
		{"forbidden aggregate only", Group{Suffix: "_x", ForbiddenAggs: []string{"agg"}}, 0},
		{"required trait", Group{Suffix: "_x", Required: [][]string{{"HW_NUMA_ROOT"}}, Forbidden: []string{"HW_NIC_SRIOV"}}, 1},
	} {
		req := Request{Groups: []Group{{Resources: []Resource{{"IPV4_ADDRESS", 1}}}, tc.group},
			GroupPolicy: PolicyNone, SameSubtree: [][]string{{"", "_x"}}}
		res, err := Find(s, req, Options{NestedAware: true})
		if err != nil || len(res.Candidates) != tc.want {
			t.Errorf("%s: %d candidates (%v), want %d", tc.name, len(res.Candidates), err, tc.want)
		}
	}
}
