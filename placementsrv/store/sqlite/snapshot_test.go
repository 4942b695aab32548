package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestSnapshotFollowsWrites checks that a snapshot taken after a write
// returned reflects it, and that without writes the same snapshot is
// handed out again.
func TestSnapshotFollowsWrites(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	snap := func() *candidates.Snapshot {
		t.Helper()
		sn, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	s1 := snap()
	if s2 := snap(); s2 != s1 {
		t.Fatal("snapshot rebuilt without a write")
	}
	if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: otherRPUUID, Name: "child", ParentUUID: rpUUID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetInventories(ctx, otherRPUUID, 0, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alConsumerA, nil, alOn(otherRPUUID, "VCPU", 3))}); err != nil {
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
	vi := child.Inventory(s3.ClassByName["VCPU"])
	if vi == nil || vi.Total != 8 || vi.Used != 3 || vi.Capacity != 8 || child.Generation != 2 {
		t.Fatalf("inventory/usage wrong: %+v gen %d", vi, child.Generation)
	}
	// A failed write changes nothing, so the snapshot stays.
	if err := s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alConsumerB, nil, alOn(otherRPUUID, "VCPU", 99))}); err == nil {
		t.Fatal("over-capacity write accepted")
	}
	if snap() != s3 {
		t.Fatal("failed write invalidated the snapshot")
	}
}

// TestSnapshotConcurrentReaders runs readers against a writer under -race:
// every snapshot a reader gets after seeing a write acknowledged has it.
func TestSnapshotConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
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
				if _, err := s.Snapshot(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 20 {
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: uuid, Name: uuid}); err != nil {
			t.Fatal(err)
		}
		sn, err := s.Snapshot(ctx)
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

// benchState fills a state like ../shared/bench's dataset: n roots with
// three inventories, usage, ~8 traits and a rack aggregate; every 10th
// root has two NUMA children and a NIC.
func benchState(n int) *state {
	st := newState()
	class := func(name string, id int64) *resourceClass {
		c := &resourceClass{id: id, name: name, providers: map[*provider]struct{}{}}
		st.classes[name] = c
		return c
	}
	vcpu, mem, disk, nic := class("VCPU", 0), class("MEMORY_MB", 1), class("DISK_GB", 2), class("NET_BW_EGR_KILOBIT_PER_SEC", 3)
	traits := make([]*trait, 12)
	for i := range traits {
		traits[i] = &trait{id: int64(i), name: fmt.Sprintf("T%d", i), providers: map[*provider]struct{}{}}
		st.traits[traits[i].name] = traits[i]
	}
	var id int64
	addInv := func(p *provider, c *resourceClass, total int64) {
		p.inventories[c] = &inventory{class: c, total: total, minUnit: 1, maxUnit: total, stepSize: 1, allocationRatio: 1}
		p.usage[c] = total / 3
	}
	newP := func(parent *provider) *provider {
		id++
		p := newProvider(id, fmt.Sprintf("00000000-0000-4000-8000-%012d", id), fmt.Sprint(id))
		p.root = p
		if parent != nil {
			p.parent, p.root = parent, parent.root
			parent.children[p] = struct{}{}
		}
		st.providers[p.uuid] = p
		st.providerList = append(st.providerList, p)
		return p
	}
	var agg *aggregate
	for i := 0; i < n; i++ {
		if i%20 == 0 {
			agg = &aggregate{id: int64(i), uuid: fmt.Sprintf("agg-%d", i), members: map[*provider]struct{}{}}
			st.aggregates[agg.uuid] = agg
		}
		r := newP(nil)
		r.aggregates[agg] = struct{}{}
		for k := 0; k < 8; k++ {
			r.traits[traits[(i+k)%len(traits)]] = struct{}{}
		}
		addInv(r, disk, 2000)
		if i%10 == 4 {
			for k := 0; k < 2; k++ {
				c := newP(r)
				addInv(c, vcpu, 16)
				addInv(c, mem, 65536)
			}
			addInv(newP(r), nic, 10000000)
		} else {
			addInv(r, vcpu, 32)
			addInv(r, mem, 131072)
		}
	}
	return st
}

func BenchmarkSnapshotBuild(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		st := benchState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buildSnapshot(st, 1)
			}
		})
	}
}
