package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// describe is the structure of the Placement database at url (an
// SQLAlchemy URL), read-only.
func describe(t *testing.T, url string) []string {
	t.Helper()
	u, err := dburl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, dialect, err := openUpstream(context.Background(), u, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lines, err := upstream.Describe(context.Background(), db, dialect)
	if err != nil {
		t.Fatalf("describe %s: %v", url, err)
	}
	return lines
}

// requireSameSchema fails unless both databases have the same tables,
// columns, keys, indexes and alembic revision: an export must be what
// the release's own migrations would have made.
func requireSameSchema(t *testing.T, want, got string) {
	t.Helper()
	w, g := describe(t, want), describe(t, got)
	if len(w) < 100 {
		t.Fatalf("%s describes as %d lines, too few for Placement's schema:\n%s", want, len(w), strings.Join(w, "\n"))
	}
	if reflect.DeepEqual(w, g) {
		return
	}
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	wm, gm := in(w), in(g)
	var diff []string
	for _, s := range w {
		if !gm[s] {
			diff = append(diff, "- "+s)
		}
	}
	for _, s := range g {
		if !wm[s] {
			diff = append(diff, "+ "+s)
		}
	}
	t.Fatalf("schema of %s differs from %s's (- only there, + only in ours):\n%s", got, want, strings.Join(diff, "\n"))
}

// TestAdopt15_SQLite: Placement 15.0.0 on SQLite, filled through its
// API, is imported and verified; the import is exported at 15.0.0's head
// with 15.0.0's own schema, 15.0.0 serves it and verify finds no
// difference; exported for 8.0.0 instead (the release api.release names),
// 8.0.0 serves it alike.
func TestAdopt15_SQLite(t *testing.T) {
	ref := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V15})
	fillRich(t, newPlacementAPI(t, ref.URL, ref.Token))
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.db")
	code, out := runCmd(t, "db", "import", "--from", ref.DB, "--db", ours)
	if code != 0 || !strings.Contains(out, "(Placement 15.0.0 schema, alembic revision a082b8bb98d0)") || strings.Contains(out, "note:") {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	code, out = runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours)
	if code != 0 || !strings.Contains(out, "8 providers, 4 consumers, 3 projects") || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify after import: exit %d\n%s", code, out)
	}
	exported := "sqlite:///" + filepath.Join(dir, "exported15.sqlite")
	code, out = runCmd(t, "db", "export", "--to", exported, "--db", ours)
	if code != 0 || !strings.Contains(out, "(Placement 15.0.0 schema, alembic revision a082b8bb98d0)") {
		t.Fatalf("export (default api.release): exit %d\n%s", code, out)
	}
	requireSameSchema(t, ref.DB, exported)
	back := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V15, DB: exported})
	requireSameSchema(t, ref.DB, exported) // 15.0.0's start-up 'db sync' left it as it was
	if code, out := runCmd(t, "db", "verify", "--against", back.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify against 15.0.0 serving the export: exit %d\n%s", code, out)
	}
	if code, out := runCmd(t, "db", "verify", "--against", ref.URL, "--ours", back.URL); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify 15.0.0 against 15.0.0 on the export: exit %d\n%s", code, out)
	}

	// The other way: a configuration that follows 8.0.0 exports for it.
	conf := filepath.Join(dir, "v8.yaml")
	writeFile(t, conf, "api:\n  release: \"8.0.0\"\n")
	exported8 := "sqlite:///" + filepath.Join(dir, "exported8.sqlite")
	code, out = runCmd(t, "db", "export", "--to", exported8, "--config", conf, "--db", ours)
	if code != 0 || !strings.Contains(out, "(Placement 8.0.0 schema, alembic revision 422ece571366)") {
		t.Fatalf("export (api.release 8.0.0): exit %d\n%s", code, out)
	}
	old := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V8, DB: exported8})
	if code, out := runCmd(t, "db", "verify", "--against", old.URL, "--config", conf, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify against 8.0.0 serving the export: exit %d\n%s", code, out)
	}
	if d := describe(t, exported8); d[0] != "alembic "+upstream.Rev8 {
		t.Errorf("8.0.0 changed the export's revision: %s", d[0])
	}
	t.Run("Refusals", func(t *testing.T) { refusals15(t, ref.DB, ours) })
}

// refusals15: a 15.0.0 source at an unknown head, or one that fails to
// read, is refused with our database left as it was.
func refusals15(t *testing.T, src, ours string) {
	dir := t.TempDir()
	data, err := os.ReadFile(sqlitePath(t, src))
	if err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown-head.db")
	writeFile(t, unknown, string(data))
	execSQLite(t, unknown, `UPDATE alembic_version SET version_num = '0123456789ab'`)
	orphan := filepath.Join(dir, "orphan.db")
	writeFile(t, orphan, string(data))
	execSQLite(t, orphan, `UPDATE allocations SET consumer_id = 'nobody' WHERE id = (SELECT max(id) FROM allocations)`)
	before := fileSum(t, ours)
	for _, c := range []struct {
		name, from string
		code       int
		want       string
	}{
		{"unknown head", unknown, exitSchema, "alembic revision 0123456789ab, which is none of the heads this binary reads (422ece571366 (8.0.0), a082b8bb98d0 (15.0.0))"},
		{"orphan allocation", orphan, exitFailure, "consumer nobody has no row in consumers"},
	} {
		code, out := runCmd(t, "db", "import", "--from", "sqlite:///"+c.from, "--db", ours, "--replace")
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", c.name, code, c.code, c.want, out)
		}
		if fileSum(t, ours) != before {
			t.Fatalf("%s: our database changed", c.name)
		}
	}
}

// TestAdopt15_MariaDB: Placement 15.0.0 on MariaDB, filled through its
// API, is imported into our SQLite file and into our MySQL store, each
// verified, exported at 15.0.0's head with 15.0.0's own schema and
// verified against 15.0.0 serving the export; a failed import changes
// nothing.
func TestAdopt15_MariaDB(t *testing.T) {
	maria := mariadbtest.Start(t)
	src := maria.URL(maria.NewDatabase(t))
	ref := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V15, DB: src})
	fillRich(t, newPlacementAPI(t, ref.URL, ref.Token))
	if d := describe(t, src); d[0] != "alembic "+upstream.Rev15 {
		t.Fatalf("15.0.0 left its database at %s", d[0])
	}
	for i, target := range []string{"SQLiteTarget", "MySQLTarget"} {
		t.Run(target, func(t *testing.T) {
			ours := filepath.Join(t.TempDir(), "ours.db")
			if i == 1 {
				ours = maria.URL(maria.NewDatabase(t))
			}
			adoptRoundTrip(t, maria, src, ref, ours)
		})
	}
	t.Run("FailedImportIntoMySQL", func(t *testing.T) { failedMySQLImport(t, maria, src) })
}
