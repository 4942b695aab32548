package inventorymetrics

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// fixedStore answers one snapshot.
type fixedStore struct{ snap *readmodel.Snapshot }

func (f fixedStore) Snapshot(context.Context) (*readmodel.Snapshot, error) { return f.snap, nil }

// TestHeldBack: a class's held-back total counts only inventories reserved
// in full (a node cleaning), not a partial reservation, and capacity
// already leaves reserved out.
func TestHeldBack(t *testing.T) {
	b := readmodel.NewSnapshotBuilder(1, 3)
	gold := b.Class("CUSTOM_BAREMETAL_GOLD")
	mem := b.Class("MEMORY_MB")
	inv := func(class int32, total, reserved int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: class, Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total, StepSize: 1,
			AllocationRatio: 1, Capacity: total - reserved}
	}
	b.AddProvider(readmodel.SnapProvider{UUID: "n1", ID: 1}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv(gold, 1, 1)}})
	b.AddProvider(readmodel.SnapProvider{UUID: "n2", ID: 2}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv(gold, 1, 0)}})
	b.AddProvider(readmodel.SnapProvider{UUID: "c1", ID: 3}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv(mem, 4096, 512)}})
	snap := b.Finish(func(int) int32 { return -1 })

	reg := prometheus.NewRegistry()
	reg.MustRegister(New(fixedStore{snap}, zap.NewNop(), false))
	want := `
# HELP placement_syncd_resource_class_held_back Total of a resource class's inventories held back in full (reserved == total, e.g. a node cleaning or an FPGA being programmed) over all providers; part of reserved.
# TYPE placement_syncd_resource_class_held_back gauge
placement_syncd_resource_class_held_back{resource_class="CUSTOM_BAREMETAL_GOLD"} 1
placement_syncd_resource_class_held_back{resource_class="MEMORY_MB"} 0
# HELP placement_syncd_resource_class_capacity Schedulable capacity of a resource class over all providers: the sum of (total - reserved) * allocation_ratio.
# TYPE placement_syncd_resource_class_capacity gauge
placement_syncd_resource_class_capacity{resource_class="CUSTOM_BAREMETAL_GOLD"} 1
placement_syncd_resource_class_capacity{resource_class="MEMORY_MB"} 3584
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"placement_syncd_resource_class_held_back", "placement_syncd_resource_class_capacity"); err != nil {
		t.Fatal(err)
	}
}
