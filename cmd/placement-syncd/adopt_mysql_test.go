package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/internal/mariadbtest"
	"github.com/placement-syncd/placement-syncd/internal/placementtest"
)

// TestAdopt_MariaDB: the reference on MariaDB is imported and verified;
// the export to a new MariaDB database is served by the reference and
// verified again.
func TestAdopt_MariaDB(t *testing.T) {
	maria := mariadbtest.Start(t)
	src := maria.URL(maria.NewDatabase(t))
	ref := placementtest.StartReferenceOn(t, src)
	fillRich(t, placementAPI{t: t, base: ref.URL, token: ref.Token})
	ours := filepath.Join(t.TempDir(), "ours.db")
	if code, out := runCmd(t, "db", "import", "--from", src, "--db", ours); code != 0 || !strings.Contains(out, "import: allocations") {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	if code, out := runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify after import from MariaDB: exit %d\n%s", code, out)
	}
	dst := maria.URL(maria.NewDatabase(t))
	if code, out := runCmd(t, "db", "export", "--to", dst, "--db", ours); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	back := placementtest.StartReferenceOn(t, dst)
	if code, out := runCmd(t, "db", "verify", "--against", back.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify against the reference on the MariaDB export: exit %d\n%s", code, out)
	}
	// An export never writes into a database that has tables.
	if code, out := runCmd(t, "db", "export", "--to", dst, "--db", ours); code != exitFailure || !strings.Contains(out, "export into an empty database") {
		t.Errorf("export into a filled database: exit %d\n%s", code, out)
	}
}
