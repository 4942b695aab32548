package main

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAdopt_MariaDB: the reference on MariaDB, filled through its API,
// is imported into our SQLite file and into our MySQL store, each
// verified and exported back to a database the reference serves; one
// MariaDB server, a database per step.
func TestAdopt_MariaDB(t *testing.T) {
	maria := mariadbtest.Start(t)
	src := maria.URL(maria.NewDatabase(t))
	ref := placementtest.StartReferenceOn(t, src)
	fillRich(t, newPlacementAPI(t, ref.URL, ref.Token))
	t.Run("SQLiteTarget", func(t *testing.T) {
		ours := filepath.Join(t.TempDir(), "ours.db")
		adoptRoundTrip(t, maria, src, ref, ours)
	})
	t.Run("MySQLTarget", func(t *testing.T) {
		ours := maria.URL(maria.NewDatabase(t))
		adoptRoundTrip(t, maria, src, ref, ours)
	})
	t.Run("FailedImportIntoMySQL", func(t *testing.T) { failedMySQLImport(t, maria, src) })
	t.Run("PlacementConf", func(t *testing.T) { placementConfOnMySQL(t, maria, src, ref) })
}

// adoptRoundTrip imports src into ours (a path or a URL), verifies it
// against the reference ref still serving src, exports it to a new
// MariaDB database at ref's schema head, checks that schema is the one
// ref's migrations made in src, and verifies ours against ref's release
// serving the export.
func adoptRoundTrip(t *testing.T, maria *mariadbtest.Server, src string, ref *placementtest.Server, ours string) {
	head := upstream.HeadOf(ref.Release)
	code, out := runCmd(t, "db", "import", "--from", src, "--db", ours)
	if code != 0 || !strings.Contains(out, "import: allocations") || !strings.Contains(out, "into "+dbName(mustURL(t, ours))) ||
		!strings.Contains(out, "alembic revision "+head.Revision) {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	if code, out := runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify after import from MariaDB: exit %d\n%s", code, out)
	}
	dst := maria.URL(maria.NewDatabase(t))
	if code, out := runCmd(t, "db", "export", "--to", dst, "--release", ref.Release.String(), "--db", ours); code != 0 ||
		!strings.Contains(out, "from "+dbName(mustURL(t, ours))) || !strings.Contains(out, "alembic revision "+head.Revision) {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	requireSameSchema(t, src, dst)
	back := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: ref.Release, DB: dst})
	requireSameSchema(t, src, dst) // its start-up 'db sync' found nothing to do
	if code, out := runCmd(t, "db", "verify", "--against", back.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify against the reference on the MariaDB export: exit %d\n%s", code, out)
	}
	// An export never writes into a database that has tables.
	if code, out := runCmd(t, "db", "export", "--to", dst, "--db", ours); code != exitFailure || !strings.Contains(out, "export into an empty database") {
		t.Errorf("export into a filled database: exit %d\n%s", code, out)
	}
}

// mustURL is the database --db names: a URL, or an SQLite path.
func mustURL(t *testing.T, db string) *dburl.URL {
	t.Helper()
	if !strings.Contains(db, "://") {
		return dbstore.FileURL(db)
	}
	u, err := dburl.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// loadOurs reads our whole database through the store contract.
func loadOurs(t *testing.T, db string) *store.Records {
	t.Helper()
	be, err := dbstore.OpenBackend(context.Background(), mustURL(t, db), dbstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	recs, err := be.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// failedMySQLImport: an import with --replace that fails at its last
// table (MariaDB refuses every allocation, by a trigger) leaves our MySQL
// database as it was, the rows it was to replace included; without
// --replace a filled database is refused before anything is written.
func failedMySQLImport(t *testing.T, maria *mariadbtest.Server, src string) {
	db := maria.NewDatabase(t)
	ours := maria.URL(db)
	if code, out := runCmd(t, "db", "import", "--from", src, "--db", ours); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	before := loadOurs(t, ours)
	if len(before.Allocations) == 0 || len(before.Providers) == 0 {
		t.Fatalf("nothing imported: %d providers, %d allocations", len(before.Providers), len(before.Allocations))
	}
	if code, out := runCmd(t, "db", "import", "--from", src, "--db", ours); code != exitFailure || !strings.Contains(out, "nothing was changed") {
		t.Errorf("import into a filled database: exit %d\n%s", code, out)
	}
	if err := maria.Exec(context.Background(), db, "CREATE TRIGGER refuse_allocations BEFORE INSERT ON allocations FOR EACH ROW "+
		"SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'allocations refused for the test'"); err != nil {
		t.Fatal(err)
	}
	code, out := runCmd(t, "db", "import", "--from", src, "--db", ours, "--replace")
	if code == 0 || !strings.Contains(out, "allocations refused for the test") || !strings.Contains(out, "nothing was changed") {
		t.Fatalf("import that fails at allocations: exit %d\n%s", code, out)
	}
	if after := loadOurs(t, ours); !reflect.DeepEqual(before, after) {
		t.Errorf("a failed import changed our MySQL database: %d providers, %d consumers, %d allocations before; %d, %d, %d after",
			len(before.Providers), len(before.Consumers), len(before.Allocations), len(after.Providers), len(after.Consumers), len(after.Allocations))
	}
}
