package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// testSnapshotFollowsWrites checks that a snapshot taken after a write
// returned reflects it, and that without writes the same snapshot is
// handed out again.
func testSnapshotFollowsWrites(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx, l := e.ctx, e.l
	snap := func() *readmodel.Snapshot {
		t.Helper()
		sn, err := l.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	s1 := snap()
	if s2 := snap(); s2 != s1 {
		t.Fatal("snapshot rebuilt without a write")
	}
	if _, err := l.CreateProvider(ctx, store.NewProvider{UUID: otherRPUUID, Name: "child", ParentUUID: rpUUID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.SetInventories(ctx, otherRPUUID, 0, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatal(err)
	}
	if err := l.ReplaceAllocations(ctx, []store.ConsumerAllocations{claim(consumerA, nil, on(otherRPUUID, "VCPU", 3))}); err != nil {
		t.Fatal(err)
	}
	s3 := snap()
	if s3 == s1 || s3.Version <= s1.Version {
		t.Fatalf("snapshot version %d after writes, was %d", s3.Version, s1.Version)
	}
	ci, ok := s3.ByUUID[otherRPUUID]
	if !ok {
		t.Fatal("new provider missing from snapshot")
	}
	child := &s3.Providers[ci]
	root := s3.ByUUID[rpUUID]
	if child.Parent != root || child.Root != root || !s3.HasTrees || len(s3.Providers[root].Tree) != 2 {
		t.Fatalf("tree links wrong: %+v", child)
	}
	vi := s3.Inventory(ci, s3.ClassByName["VCPU"])
	if gen := s3.State(ci).Generation; vi == nil || vi.Total != 8 || vi.Used != 3 || vi.Capacity != 8 || gen != 2 {
		t.Fatalf("inventory/usage wrong: %+v gen %d", vi, gen)
	}
	// A failed write changes nothing, so the snapshot stays.
	if err := l.ReplaceAllocations(ctx, []store.ConsumerAllocations{claim(consumerB, nil, on(otherRPUUID, "VCPU", 99))}); err == nil {
		t.Fatal("over-capacity write accepted")
	}
	if snap() != s3 {
		t.Fatal("failed write invalidated the snapshot")
	}
}

// testSnapshotConcurrentReaders runs readers against a writer (under
// -race): every snapshot a reader gets after seeing a write acknowledged
// has it.
func testSnapshotConcurrentReaders(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx, l := e.ctx, e.l
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := l.Snapshot(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 20 {
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if _, err := l.CreateProvider(ctx, store.NewProvider{UUID: uuid, Name: uuid}); err != nil {
			t.Fatal(err)
		}
		sn, err := l.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sn.ByUUID[uuid]; !ok {
			t.Fatalf("snapshot %d misses acknowledged provider %s", sn.Version, uuid)
		}
	}
	close(done)
	wg.Wait()
}
