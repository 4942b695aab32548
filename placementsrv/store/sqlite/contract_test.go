package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
	"github.com/placement-syncd/placement-syncd/placementsrv/storetest"
)

// TestContract runs the backend contract, and the ledger over it, on a
// real database file.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Storage {
		path := filepath.Join(t.TempDir(), "placement.db")
		return func(t *testing.T) store.Backend {
			t.Helper()
			be, err := sqlite.Open(context.Background(), path, sqlite.Options{Migrate: true})
			if err != nil {
				t.Fatalf("open %s: %v", path, err)
			}
			return be
		}
	})
}
