package source

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// benchWorld is hosts compute nodes (64 VCPU, 256 GiB, 2 TB) in 10
// aggregates, 5 of them zones.
func benchWorld(hosts int) (*readmodel.Snapshot, []any) {
	b := readmodel.NewSnapshotBuilder(1, hosts)
	vcpu, mem, disk := b.Class("VCPU"), b.Class("MEMORY_MB"), b.Class("DISK_GB")
	b.Trait("COMPUTE_STATUS_DISABLED")
	inv := func(class int32, total int64, ratio float64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: class, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1,
			AllocationRatio: ratio, Capacity: int64(float64(total) * ratio), Used: total / 3}
	}
	var aggs []any
	for a := range 10 {
		md := map[string]string{}
		if a < 5 {
			md["availability_zone"] = fmt.Sprintf("az%d", a)
		}
		aggs = append(aggs, map[string]any{"uuid": fmt.Sprintf("a0000000-0000-4000-8000-%012d", a), "name": fmt.Sprintf("agg%d", a),
			"hosts": []string{}, "metadata": md})
	}
	for i := range hosts {
		p := readmodel.SnapProvider{ID: int64(i + 1), UUID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("cn%05d", i),
			Aggregates: []int32{b.Aggregate(fmt.Sprintf("a0000000-0000-4000-8000-%012d", i%10))}}
		b.AddProvider(p, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{
			inv(vcpu, 64, 4), inv(mem, 262144, 1), inv(disk, 2000, 1)}})
	}
	return b.Finish(func(int) int32 { return -1 }), aggs
}

// BenchmarkCollect is one scrape with capacity on, 50 flavors over
// 1,000 hosts: the default families, then with the per-host ones
// (capacity.per_host and os_capacity_metrics: about 100,000 series).
func BenchmarkCollect(b *testing.B) {
	snap, aggs := benchWorld(1000)
	var flavors []any
	for i := range 50 {
		flavors = append(flavors, map[string]any{"id": fmt.Sprint(i), "name": fmt.Sprintf("f%02d", i), "vcpus": 1 + i%16,
			"ram": 1024 * (1 + i%32), "disk": 10 * (1 + i%8), "swap": "", "OS-FLV-EXT-DATA:ephemeral": 0,
			"os-flavor-access:is_public": true, "extra_specs": map[string]string{}})
	}
	raw, _ := json.Marshal(map[string]any{"aggregates": aggs, "hypervisors": []any{}, "flavors": flavors})
	path := filepath.Join(b.TempDir(), "nova.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	src := New(Options{Nova: novaclient.File{Path: path}, Refresh: 1, DefaultZone: "nova"})
	if err := src.Refresh(b.Context()); err != nil {
		b.Fatal(err)
	}
	for _, o := range []CollectorOptions{{}, {PerHost: true, OSCapacity: true}} {
		b.Run(fmt.Sprintf("per_host=%t", o.PerHost), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(NewCollector(fixedStore{snap}, src, o, zap.NewNop()))
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
