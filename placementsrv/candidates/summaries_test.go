package candidates

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestSummariesFollowPatches checks the summary fragments kept across
// patched snapshots: after a patch changes one provider's usage, an
// answer rendered with the kept fragments is byte for byte the answer a
// fresh renderer gives, and the fragments are shared, not rebuilt.
func TestSummariesFollowPatches(t *testing.T) {
	sb := readmodel.NewSnapshotBuilder(1, 8)
	vcpu := sb.Class("VCPU")
	inv := func(used int64) []readmodel.SnapInventory {
		return []readmodel.SnapInventory{{Class: vcpu, Total: 64, MinUnit: 1, MaxUnit: 64, StepSize: 1, AllocationRatio: 1, Capacity: 64, Used: used}}
	}
	for i := range 8 {
		sb.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("cn-%d", i)}, readmodel.ProviderState{Inventories: inv(int64(i))})
	}
	snap := sb.Finish(func(int) int32 { return -1 })
	req := Request{Groups: []Group{{Resources: []Resource{{Class: "VCPU", Amount: 1}}}}}
	answer := func(rd *Renderer, s *readmodel.Snapshot) []byte {
		t.Helper()
		q, err := Prepare(s, req, Options{NestedAware: true})
		if err != nil {
			t.Fatal(err)
		}
		w := &bufWriter{}
		if err := rd.Answer(s, q, &req, microversion.Max, false).Stream(w); err != nil {
			t.Fatal(err)
		}
		return w.b
	}
	rd := &Renderer{}
	answer(rd, snap)
	for v, used := range []int64{40, 41, 3} {
		next := snap.Patched(uint64(v+2), []readmodel.UsagePatch{{Provider: 3, Generation: int64(v + 1), Inventories: inv(used)}})
		if next == nil {
			t.Fatal("patch refused")
		}
		got, want := answer(rd, next), answer(&Renderer{}, next)
		if !bytes.Equal(got, want) {
			t.Fatalf("used %d: kept fragments give\n%s\nfresh rendering\n%s", used, got, want)
		}
		if !bytes.Contains(got, fmt.Appendf(nil, `"cn-3":{"resources":{"VCPU":{"capacity":64,"used":%d}}`, used)) {
			t.Fatalf("used %d not in %s", used, got)
		}
		if rd.names(next).summaries != rd.names(snap).summaries {
			t.Fatal("a patched snapshot does not share the summary fragments")
		}
		snap = next
	}
}
