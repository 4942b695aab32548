package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// RunReplicas checks several ledgers sharing one database through the
// backend's change feed (store.Feed): each reads what the others wrote
// once it has polled the feed, writes stay correct without polling, and
// claims through all of them never exceed a provider's capacity. A
// backend that implements store.Feed runs it besides Run.
func RunReplicas(t *testing.T, newStorage func(t *testing.T) Storage) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Storage)
	}{
		{"replicas/reads follow writes", testReplicasFollow},
		{"replicas/writes catch up first", testReplicasWriteCatchUp},
		{"replicas/claims never exceed capacity", testReplicaClaims},
		{"replicas/pruned feed reloads", testReplicaPruned},
		{"replicas/consistent reads", testReplicaConsistentReads},
		{"replicas/changes out of id order", testFeedHoles},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStorage(t)) })
	}
}

// openReplicas opens n ledgers over n backends of the same storage.
func openReplicas(t *testing.T, s Storage, n int) []*ledger.Ledger {
	t.Helper()
	out := make([]*ledger.Ledger, n)
	for i := range out {
		be := s(t)
		l, err := ledger.New(context.Background(), be, ledger.Options{})
		if err != nil {
			be.Close()
			t.Fatalf("open replica %d: %v", i, err)
		}
		if !l.Replicated() {
			l.Close()
			t.Fatalf("backend %T has no change feed", be)
		}
		t.Cleanup(func() { l.Close() })
		out[i] = l
	}
	return out
}

func poll(t *testing.T, ls ...*ledger.Ledger) {
	t.Helper()
	for _, l := range ls {
		if err := l.Poll(context.Background(), time.Minute); err != nil {
			t.Fatalf("poll: %v", err)
		}
	}
}

// testReplicasFollow spreads writes of every kind over three replicas;
// after a poll each answers as the others, and as a replica opened last.
func testReplicasFollow(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 3)
	for i, w := range scenario() {
		if err := w(ctx, ls[i%3]); err != nil {
			t.Fatalf("write %d on replica %d: %v", i, i%3, err)
		}
		poll(t, ls...)
		want := dump(t, ctx, ls[i%3])
		for j, l := range ls {
			if got := dump(t, ctx, l); got != want {
				t.Fatalf("after write %d on replica %d, replica %d answers:\n%s\nwant:\n%s", i, i%3, j, got, want)
			}
		}
	}
	late := openReplicas(t, s, 1)[0]
	if got, want := dump(t, ctx, late), dump(t, ctx, ls[0]); got != want {
		t.Fatalf("a replica opened last answers:\n%s\nwant:\n%s", got, want)
	}
}

// testReplicasWriteCatchUp writes on a replica that has not polled since
// another moved a generation: the write sees the move, as the reference
// would, both for a stale generation (conflict) and the current one.
func testReplicasWriteCatchUp(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 2)
	a, b := ls[0], ls[1]
	if _, err := a.CreateProvider(ctx, store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 4)}); err != nil {
		t.Fatalf("write on a replica that has not polled the provider's creation: %v", err)
	}
	// a has not polled: its memory says generation 0.
	_, _, err := a.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8)})
	if !errors.Is(err, store.ErrConcurrentUpdate) {
		t.Fatalf("stale generation through the other replica: %v, want a conflict", err)
	}
	if _, _, err := a.SetInventories(ctx, rpUUID, 1, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatalf("current generation through the other replica: %v", err)
	}
	poll(t, b)
	if got, want := dump(t, ctx, b), dump(t, ctx, a); got != want {
		t.Fatalf("replicas disagree:\n%s\n---\n%s", got, want)
	}
}

// testReplicaClaims has 16 writers claim through three replicas against
// a capacity of 50: exactly 50 win, the others are refused for capacity,
// and every replica and the database agree on the usage.
func testReplicaClaims(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 3)
	const capacity, writers, perWriter = 50, 16, 5
	if _, err := ls[0].CreateProvider(ctx, store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ls[0].SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", capacity)}); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	errs := race(writers*perWriter, func(i int) error {
		c := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", n.Add(1))
		return ls[i%3].ReplaceAllocations(ctx, []store.ConsumerAllocations{claim(c, nil, on(rpUUID, "VCPU", 1))})
	})
	if won := winners(t, errs, store.ErrCapacityExceeded); won != capacity {
		t.Fatalf("%d claims won, capacity %d", won, capacity)
	}
	poll(t, ls...)
	ls = append(ls, openReplicas(t, s, 1)...)
	for i, l := range ls {
		p, usages, err := l.ProviderUsages(ctx, rpUUID)
		if err != nil || usages["VCPU"] != capacity || p.Generation != 1+capacity {
			t.Fatalf("replica %d: usage %v generation %d (%v), want %d and %d", i, usages, p.Generation, err, capacity, 1+capacity)
		}
	}
}

// testReplicaPruned prunes the feed past a replica's position: its next
// poll reloads everything instead.
func testReplicaPruned(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 2)
	for _, w := range scenario()[:5] {
		if err := w(ctx, ls[0]); err != nil {
			t.Fatal(err)
		}
	}
	f, ok := s(t).(store.Feed)
	if !ok {
		t.Fatal("no change feed")
	}
	defer f.(store.Backend).Close()
	// Nothing is settled yet: pruning leaves every change.
	if n, err := f.PruneChanges(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruning before anything is settled deleted %d (%v)", n, err)
	}
	chs, _, err := f.Changes(ctx, 0, nil, 100)
	if err != nil || len(chs) == 0 {
		t.Fatalf("changes: %d (%v)", len(chs), err)
	}
	// One writer: the ids are dense, so all of them are settled.
	last := chs[len(chs)-1].ID
	if _, err := f.Settle(ctx, last, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.PruneChanges(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if chs, pruned, err := f.Changes(ctx, 0, nil, 10); err != nil || len(chs) != 0 || pruned != last {
		t.Fatalf("after pruning everything: %d changes, pruned through %d (%v), want none and %d", len(chs), pruned, err, last)
	}
	poll(t, ls[1])
	if got, want := dump(t, ctx, ls[1]), dump(t, ctx, ls[0]); got != want {
		t.Fatalf("replica after a reload:\n%s\nwant:\n%s", got, want)
	}
	if err := scenario()[5](ctx, ls[1]); err != nil {
		t.Fatalf("write after a reload: %v", err)
	}
	poll(t, ls[0])
	if got, want := dump(t, ctx, ls[0]), dump(t, ctx, ls[1]); got != want {
		t.Fatalf("replicas disagree after a write following a reload:\n%s\nwant:\n%s", got, want)
	}
}

// testReplicaConsistentReads reads through a replica right after a write
// through another: with consistent reads Fresh makes the read see it;
// without, nothing is read from the database.
func testReplicaConsistentReads(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 2)
	a, b := ls[0], ls[1]
	b.SetConsistentReads(true)
	for i, w := range scenario()[:6] {
		if err := w(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := b.Fresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := dump(t, ctx, b), dump(t, ctx, a); got != want {
			t.Fatalf("after write %d, a fresh read answers:\n%s\nwant:\n%s", i, got, want)
		}
	}
	b.SetConsistentReads(false)
	if _, err := a.CreateProvider(ctx, store.NewProvider{UUID: "99999999-0000-4000-8000-000000000001", Name: "late"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Fresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetProvider(ctx, "99999999-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("without consistent reads Fresh caught up: %v", err)
	}
}
