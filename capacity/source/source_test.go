package source

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Aggregate uuids of the small world.
const (
	aggA = "a0000000-0000-4000-8000-00000000000a" // az1, tenant p1
	aggB = "a0000000-0000-4000-8000-00000000000b" // tenants p2 and p3
)

// fixedStore answers one snapshot, as the store hands out its read model.
type fixedStore struct{ snap *readmodel.Snapshot }

func (f fixedStore) Snapshot(context.Context) (*readmodel.Snapshot, error) { return f.snap, nil }

// smallWorld: h1 (8 VCPU, 8 GiB) in aggA; h2 (4 VCPU, 4 GiB) in aggA and
// aggB; h3 (4 VCPU, 2 GiB) in no aggregate; h4 (4 VCPU, 4 GiB) with its
// VCPU held back (reserved == total). Each has 100 GB of disk.
func smallWorld() *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(7, 4)
	vcpu, mem, disk := b.Class("VCPU"), b.Class("MEMORY_MB"), b.Class("DISK_GB")
	// Standard traits every store holds, which the requests name.
	b.Trait("COMPUTE_STATUS_DISABLED")
	b.Trait("OWNER_NOVA")
	b.Trait("OWNER_CYBORG")
	inv := func(class int32, total, reserved int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: class, Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total, StepSize: 1,
			AllocationRatio: 1, Capacity: total - reserved}
	}
	host := func(id int64, name string, cpus, mib, cpuReserved int64, aggs ...string) {
		p := readmodel.SnapProvider{ID: id, UUID: "c0000000-0000-4000-8000-00000000000" + name[1:], Name: name}
		for _, a := range aggs {
			p.Aggregates = append(p.Aggregates, b.Aggregate(a))
		}
		b.AddProvider(p, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{
			inv(vcpu, cpus, cpuReserved), inv(mem, mib, 0), inv(disk, 100, 0)}})
	}
	host(1, "h1", 8, 8192, 0, aggA)
	host(2, "h2", 4, 4096, 0, aggA, aggB)
	host(3, "h3", 4, 2048, 0)
	host(4, "h4", 4, 4096, 4)
	return b.Finish(func(int) int32 { return -1 })
}

// novaFile writes the Nova file of the small world: aggregates with
// their metadata, and three flavors (small, big, and one Nova refuses).
func novaFile(t *testing.T) novaclient.File {
	t.Helper()
	flavor := func(id, name string, vcpus, ram int, public bool, specs map[string]string) map[string]any {
		return map[string]any{"id": id, "name": name, "vcpus": vcpus, "ram": ram, "disk": 10, "swap": "",
			"OS-FLV-EXT-DATA:ephemeral": 0, "os-flavor-access:is_public": public, "extra_specs": specs}
	}
	doc := map[string]any{
		"aggregates": []any{
			map[string]any{"uuid": aggA, "name": "rack-a", "hosts": []string{"h1", "h2"},
				"metadata": map[string]string{"availability_zone": "az1", "filter_tenant_id": "p1"}},
			map[string]any{"uuid": aggB, "name": "gold", "hosts": []string{"h2"},
				"metadata": map[string]string{"filter_tenant_id": "p2", "filter_tenant_id2": "p3"}},
		},
		"hypervisors": []any{},
		"flavors": []any{
			flavor("1", "small", 1, 1024, true, map[string]string{}),
			flavor("2", "big", 8, 8192, false, map[string]string{}),
			flavor("3", "bad", 2, 1024, true, map[string]string{"hw:cpu_policy": "sometimes"}),
		},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nova.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return novaclient.File{Path: path}
}

// loaded is a Source over the small world's Nova file, read once; h4 is
// held back for maintenance.
func loaded(t *testing.T, nova Nova) *Source {
	t.Helper()
	src := New(Options{Nova: nova, Refresh: 1, DefaultZone: "nova", Log: zap.NewNop(),
		HeldBack: func() map[string]string {
			return map[string]string{"c0000000-0000-4000-8000-000000000004": "maintenance"}
		}})
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return src
}

// failingNova is a double for a Nova that cannot be read (a fault a
// real one only gives when it is down).
type failingNova struct{ novaclient.File }

func (failingNova) Flavors(context.Context) ([]novaclient.Flavor, error) {
	return nil, novaclient.ErrUnavailable
}

// TestRefresh_KeepsLastGood: a failed read is counted and changes
// nothing; before any good read there is no input.
func TestRefresh_KeepsLastGood(t *testing.T) {
	snap := smallWorld()
	never := New(Options{Nova: failingNova{}, Refresh: 1})
	if err := never.Refresh(context.Background()); err == nil {
		t.Fatal("a failing Nova refreshed")
	}
	if _, ok := never.Input(snap); ok {
		t.Fatal("input before any good read")
	}
	src := loaded(t, novaFile(t))
	src.opts.Nova = failingNova{}
	if err := src.Refresh(context.Background()); err == nil {
		t.Fatal("a failing Nova refreshed")
	}
	in, ok := src.Input(snap)
	if !ok || len(in.Flavors) != 3 || in.Aggregates[aggB].Name != "gold" || len(in.Aggregates[aggB].Projects) != 2 {
		t.Fatalf("input after a failure: %v %+v", ok, in)
	}
	if got := metricValue(t, src.failures); got != 1 {
		t.Errorf("failures %v, want 1", got)
	}
}

// TestInput_OwnerNova: the translation follows the pre-filter as it is
// when asked, without another read.
func TestInput_OwnerNova(t *testing.T) {
	src := loaded(t, novaFile(t))
	on := false
	src.opts.OwnerNova = func() bool { return on }
	in, _ := src.Input(smallWorld())
	if q := in.Flavors[0].Request.Query(0); containsOwner(q) {
		t.Errorf("pre-filter off, query %s", q)
	}
	on = true
	in, _ = src.Input(smallWorld())
	if q := in.Flavors[0].Request.Query(0); !containsOwner(q) {
		t.Errorf("pre-filter on, query %s", q)
	}
}
