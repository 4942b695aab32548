package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// The ledger's own tests look inside it and run over the real SQLite
// backend in a temporary file; the behaviour tests that need only
// store.Store live in storetest and run over every backend.

const (
	rpUUID      = "7260669a-e3d4-4867-aaa7-683e2ab6958c"
	otherRPUUID = "2e1dda56-8b18-4fb9-8c5c-3125891b7143"
)

// newDB returns the path of a fresh database file, removed after the
// test.
func newDB(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "placement.db")
}

// openBackend opens the SQLite backend over the database at path.
func openBackend(t testing.TB, path string) *sqlite.Backend {
	t.Helper()
	be, err := sqlite.Open(context.Background(), path, sqlite.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return be
}

// openAt opens (or reopens) a ledger over the database at path.
func openAt(t testing.TB, path string) *Ledger {
	t.Helper()
	be := openBackend(t, path)
	l, err := New(context.Background(), be, Options{})
	if err != nil {
		be.Close()
		t.Fatalf("open: %v", err)
	}
	return l
}

// newTestLedger opens a ledger over fresh storage with one provider and
// returns it with its database path; the ledger is closed at the end of
// the test.
func newTestLedger(t *testing.T) (*Ledger, string) {
	t.Helper()
	db := newDB(t)
	l := openAt(t, db)
	t.Cleanup(func() { l.Close() })
	if _, err := l.CreateProvider(context.Background(), store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	return l, db
}

// reopen closes l and opens its storage again, so that everything after
// comes from storage.
func reopen(t *testing.T, l *Ledger, db string) *Ledger {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openAt(t, db)
	t.Cleanup(func() { l2.Close() })
	return l2
}

func inv(class string, total int64) store.Inventory {
	return store.Inventory{ResourceClass: class, InventoryAmounts: store.InventoryAmounts{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1.0}}
}
