package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestSnapshotPatchedMatchesRebuild checks that a snapshot patched after
// allocation and inventory writes equals one built from scratch at the
// same version, through random claims, replacements, deletions and
// inventory reports (new amounts, and now and then a new class) on a tree
// of interchangeable children (whose twins follow usage and amounts),
// interleaved with structural writes.
func TestSnapshotPatchedMatchesRebuild(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestLedger(t)
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 16), inv("MEMORY_MB", 4096)}); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for i := range 4 {
		u := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i)
		kids = append(kids, u)
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: u, Name: u, ParentUUID: rpUUID}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SetInventories(ctx, u, 0, []store.Inventory{inv("DISK_GB", 4)}); err != nil {
			t.Fatal(err)
		}
	}
	patched := 0
	check := func(step string) {
		t.Helper()
		_ = s.read(func(*state) error {
			if c := s.snap.cur.Load(); c != nil && c.Version != s.version && !s.snap.rebuild {
				patched++
			}
			return nil
		})
		got, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want *readmodel.Snapshot
		_ = s.read(func(st *state) error {
			want = buildSnapshot(st, s.version)
			return nil
		})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: patched snapshot differs from a rebuild:\n got %+v\nwant %+v", step, got.Providers, want.Providers)
		}
	}
	check("start")
	r := rand.New(rand.NewPCG(1, 2))
	consumers := map[string]bool{}
	for i := range 200 {
		c := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", r.IntN(12))
		var err error
		switch op := r.IntN(12); {
		case op < 6:
			allocs := []store.Allocation{alOn(kids[r.IntN(len(kids))], "DISK_GB", 1+r.Int64N(2))}
			if r.IntN(2) == 0 {
				allocs = append(allocs, alOn(rpUUID, "VCPU", 1+r.Int64N(3)))
			}
			req := store.ConsumerAllocations{ConsumerUUID: c, ProjectID: "p", UserID: "u", ConsumerType: "INSTANCE", Allocations: allocs}
			err = s.ReplaceAllocations(ctx, []store.ConsumerAllocations{req})
			if err == nil {
				consumers[c] = true
			}
		case op < 9:
			if consumers[c] {
				err = s.DeleteConsumerAllocations(ctx, c)
				delete(consumers, c)
			}
		case op < 11:
			err = reportInventory(ctx, s, kids[r.IntN(len(kids))], r)
		default:
			// A structural write in between: the next snapshot is rebuilt.
			_, _, err = s.SetInventories(ctx, kids[r.IntN(len(kids))], -1, nil)
			if err == nil {
				t.Fatal("inventory write with a wrong generation accepted")
			}
			err = nil
			if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", i), Name: fmt.Sprint("extra", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil && !errors.Is(err, store.ErrCapacityExceeded) && !errors.Is(err, store.ErrConcurrentUpdate) {
			t.Fatalf("step %d: %v", i, err)
		}
		if r.IntN(3) != 0 {
			check(fmt.Sprint("step ", i))
		}
	}
	check("end")
	if patched < 50 {
		t.Errorf("only %d snapshots were patched", patched)
	}
}

// BenchmarkSnapshotAfterClaim is the snapshot the next candidates request
// needs after a claim: the previous one with the claimed providers'
// usage patched (compare BenchmarkSnapshotBuild).
func BenchmarkSnapshotAfterClaim(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		st := benchState(n)
		prev := buildSnapshot(st, 1)
		dirty := map[*provider]struct{}{}
		for _, id := range []int{n / 2, n / 3} {
			dirty[st.providers[fmt.Sprintf("00000000-0000-4000-8000-%012d", id)]] = struct{}{}
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if patchSnapshot(prev, dirty, 2) == nil {
					b.Fatal("not patched")
				}
			}
		})
	}
}

// reportInventory rewrites a provider's DISK_GB inventory with a random
// total and reserved, as a compute node's periodic report does, and now
// and then adds or drops a class (which the snapshot cannot patch).
func reportInventory(ctx context.Context, s *Ledger, uuid string, r *rand.Rand) error {
	p, _, err := s.GetInventories(ctx, uuid)
	if err != nil {
		return err
	}
	disk := inv("DISK_GB", 4+r.Int64N(3))
	disk.Reserved = r.Int64N(2)
	invs := []store.Inventory{disk}
	if r.IntN(5) == 0 {
		invs = append(invs, inv("VGPU", 1))
	}
	_, _, err = s.SetInventories(ctx, uuid, p.Generation, invs)
	if errors.Is(err, store.ErrInventoryInUse) {
		return nil
	}
	return err
}
