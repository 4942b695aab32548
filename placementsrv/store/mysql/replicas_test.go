package mysql_test

import (
	"context"
	"time"

	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/placementsrv/storetest"
)

// TestReplicas runs the replica contract: several ledgers on one
// database following each other through the change feed.
func TestReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(t *testing.T) storetest.Storage {
		db := server.NewDatabase(t)
		return func(t *testing.T) store.Backend { return open(t, server, db) }
	})
}

// TestLeases: one holder at a time; the holder renews; another takes an
// expired lease over; a release frees it at once.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	db := server.NewDatabase(t)
	a, b := open(t, server, db), open(t, server, db)
	defer a.Close()
	defer b.Close()
	held := func(be *mysql.Backend, holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := be.AcquireLease(ctx, "jobs", holder, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !held(a, "a", time.Hour) || held(b, "b", time.Hour) || !held(a, "a", time.Hour) {
		t.Fatal("a takes a free lease and renews it; b does not get it")
	}
	if err := b.ReleaseLease(ctx, "jobs", "b"); err != nil || held(b, "b", time.Hour) {
		t.Fatalf("b released a lease it does not hold (%v)", err)
	}
	if err := a.ReleaseLease(ctx, "jobs", "a"); err != nil || !held(b, "b", time.Millisecond) {
		t.Fatalf("after a's release b takes the lease (%v)", err)
	}
	for !held(a, "a", time.Hour) { // b's lease expires within a millisecond
		time.Sleep(time.Millisecond)
	}
	if held(b, "b", time.Hour) {
		t.Fatal("b took a's lease back")
	}
}
