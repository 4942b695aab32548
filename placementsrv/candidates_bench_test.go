package placementsrv

import (
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// BenchmarkCandidatesRenderWide measures engine plus JSON for the wide
// tree (one root, 8 one-device PCI children, 8 groups, no limit: 40320
// candidates), the largest answer the bench asks for.
func BenchmarkCandidatesRenderWide(b *testing.B) {
	sb := store.NewSnapshotBuilder(1, 9)
	inv := func(class string, total int64) store.SnapInventory {
		return store.SnapInventory{Class: sb.Class(class), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}
	}
	sb.AddProvider(store.SnapProvider{UUID: "00000000-0000-4000-8000-000000000000", Inventories: []store.SnapInventory{inv("VCPU", 8), inv("MEMORY_MB", 4096), inv("DISK_GB", 500)}})
	for k := 1; k <= 8; k++ {
		sb.AddProvider(store.SnapProvider{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), Inventories: []store.SnapInventory{inv("CUSTOM_PCI_10DE_2330", 1)}})
	}
	snap := sb.Finish(func(i int) int32 {
		if i == 0 {
			return -1
		}
		return 0
	})
	req := candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "DISK_GB", Amount: 20}, {Class: "MEMORY_MB", Amount: 2048}, {Class: "VCPU", Amount: 2}}}}, GroupPolicy: "none"}
	for g := 1; g <= 8; g++ {
		req.Groups = append(req.Groups, candidates.Group{Suffix: fmt.Sprint(g), Resources: []candidates.Resource{{Class: "CUSTOM_PCI_10DE_2330", Amount: 1}}})
	}
	b.Run("engine", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := candidates.Find(snap, req, candidates.Options{NestedAware: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine+json", func(b *testing.B) {
		size := 0
		for b.Loop() {
			res, err := candidates.Find(snap, req, candidates.Options{NestedAware: true})
			if err != nil {
				b.Fatal(err)
			}
			body := appendCandidates(nil, nil, (&candidateSettings{}).names(snap), &req, &res, microversion.Max)
			size = len(body)
		}
		b.ReportMetric(float64(size)/1e6, "MB")
	})
	b.Run("engine+stream", func(b *testing.B) {
		n := 0
		for b.Loop() {
			res, err := candidates.Find(snap, req, candidates.Options{NestedAware: true})
			if err != nil {
				b.Fatal(err)
			}
			cw := &countingWriter{}
			rest := appendCandidates(nil, cw, (&candidateSettings{}).names(snap), &req, &res, microversion.Max)
			n = cw.n + len(rest)
		}
		b.ReportMetric(float64(n)/1e6, "MB")
	})
}

// countingWriter discards what it is given, counting bytes.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
