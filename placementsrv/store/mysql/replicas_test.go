package mysql_test

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
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
