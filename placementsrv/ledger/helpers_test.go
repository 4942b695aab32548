package ledger

import (
	"context"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/storetest/memory"
)

// The ledger's own tests look inside it, so they run over the memory
// backend (storetest holds it to the same contract as SQLite); the
// behaviour tests that need only store.Store live in storetest and run
// over every backend.

const (
	rpUUID      = "7260669a-e3d4-4867-aaa7-683e2ab6958c"
	otherRPUUID = "2e1dda56-8b18-4fb9-8c5c-3125891b7143"
)

// openAt opens (or reopens) a ledger over db.
func openAt(t testing.TB, db *memory.DB) *Ledger {
	t.Helper()
	l, err := New(context.Background(), db.Open(), Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

// newTestLedger opens a ledger over fresh storage with one provider and
// returns it with its storage; the ledger is closed at the end of the
// test.
func newTestLedger(t *testing.T) (*Ledger, *memory.DB) {
	t.Helper()
	db := memory.New()
	l := openAt(t, db)
	t.Cleanup(func() { l.Close() })
	if _, err := l.CreateProvider(context.Background(), store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	return l, db
}

// reopen closes l and opens its storage again, so that everything after
// comes from storage.
func reopen(t *testing.T, l *Ledger, db *memory.DB) *Ledger {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openAt(t, db)
	t.Cleanup(func() { l2.Close() })
	return l2
}

func inv(class string, total int64) store.Inventory {
	return store.Inventory{ResourceClass: class, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1.0}
}
