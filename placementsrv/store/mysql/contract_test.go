package mysql_test

import (
	"context"
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/placementsrv/storetest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// server is the one MariaDB of this test binary; each test gets a
// database of its own on it.
var server *mariadbtest.Server

func TestMain(m *testing.M) {
	os.Exit(svcproc.RunEager(m, mariadbtest.Shared(), &server, svcproc.NoLeaks()))
}

// open opens the backend on db, migrating it.
func open(t testing.TB, s *mariadbtest.Server, db string) *mysql.Backend {
	t.Helper()
	be, err := mysql.Open(context.Background(), s.Config(db), mysql.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	return be
}

// TestContract runs the backend contract, and the ledger over it, on a
// real MariaDB database.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Storage {
		db := server.NewDatabase(t)
		return func(t *testing.T) store.Backend { return open(t, server, db) }
	})
}
