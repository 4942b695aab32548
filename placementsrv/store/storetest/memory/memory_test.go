package memory_test

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/storetest"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/storetest/memory"
)

// TestContract holds the memory backend to the contract the ledger's own
// tests rely on it for.
func TestContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) storetest.Storage {
		db := memory.New()
		return func(*testing.T) store.Backend { return db.Open() }
	})
}
