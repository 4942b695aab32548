package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// runCmd runs the program in-process and returns its exit code and
// output.
func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), args, &out, &out)
	return code, out.String()
}

func sqlitePath(t *testing.T, url string) string {
	t.Helper()
	p, ok := strings.CutPrefix(url, "sqlite:///")
	if !ok {
		t.Fatalf("not an SQLite URL: %s", url)
	}
	return p
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestAdopt_RoundTrip: the reference, filled through its API, is
// imported and verified; the import is exported, the reference serves
// the export, and verify finds no difference there either.
func TestAdopt_RoundTrip(t *testing.T) {
	ref := placementtest.StartReference(t)
	fillRich(t, newPlacementAPI(t, ref.URL, ref.Token))
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.db")
	srcSum := fileSum(t, sqlitePath(t, ref.DB))

	code, out := runCmd(t, "db", "import", "--from", ref.DB, "--db", ours)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	for _, want := range []string{"import: resource_providers", "8 rows", "import: allocations", "imported "} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	// The import remembers the release that served the records, so that
	// serve warns when it follows another by default.
	if m := regexp.MustCompile(`\(Placement (\S+) schema`).FindStringSubmatch(out); m == nil || servedRelease(t, ours) != m[1] {
		t.Errorf("served release after import: %q; output:\n%s", servedRelease(t, ours), out)
	}
	// placement.conf naming Placement's own file: serve refuses it and
	// says which import to run; the file is only read.
	conf := filepath.Join(dir, "placement.conf")
	writeFile(t, conf, devstackConf(t, ref.DB))
	code, out = runCmd(t, "serve", "--placement-conf", conf, "--listen", "127.0.0.1:0")
	if code != exitSchema || !strings.Contains(out, conf+":6: [placement_database] connection: "+ref.DB+" is OpenStack Placement's own database") ||
		!strings.Contains(out, "'placement-syncd db import --from "+ref.DB+" --db ") {
		t.Errorf("serve on Placement's own SQLite file: exit %d\n%s", code, out)
	}
	if fileSum(t, sqlitePath(t, ref.DB)) != srcSum {
		t.Error("import or serve changed the source database")
	}
	code, out = runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours)
	if code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify after import: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "8 providers, 4 consumers, 3 projects") {
		t.Errorf("verify walked less than the dataset:\n%s", out)
	}

	exported := filepath.Join(dir, "exported.sqlite")
	code, out = runCmd(t, "db", "export", "--to", "sqlite:///"+exported, "--release", "8.0.0", "--db", ours)
	if code != 0 || !strings.Contains(out, "(Placement 8.0.0 schema, alembic revision 422ece571366)") {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	requireSameSchema(t, ref.DB, "sqlite:///"+exported)
	back := placementtest.StartReferenceOn(t, "sqlite:///"+exported)
	code, out = runCmd(t, "db", "verify", "--against", back.URL, "--db", ours)
	if code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify against the reference serving the export: exit %d\n%s", code, out)
	}
	// The reference's own database and the export answer alike too.
	code, out = runCmd(t, "db", "verify", "--against", ref.URL, "--ours", back.URL)
	if code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify reference against reference-on-export: exit %d\n%s", code, out)
	}
}

// TestAdopt_VerifyFindsDifferences: a change on one side is reported and
// exits 1.
func TestAdopt_VerifyFindsDifferences(t *testing.T) {
	ref := placementtest.StartReference(t)
	api := newPlacementAPI(t, ref.URL, ref.Token)
	fillRich(t, api)
	ours := filepath.Join(t.TempDir(), "ours.db")
	if code, out := runCmd(t, "db", "import", "--from", ref.DB, "--db", ours); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	api.do("DELETE", "/allocations/"+uuidN(7, 4), "1.39", nil, 204)
	code, out := runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours)
	if code != exitFailure {
		t.Fatalf("verify: exit %d, want %d\n%s", code, exitFailure, out)
	}
	for _, want := range []string{"GET /allocations/" + uuidN(7, 4), "GET /resource_providers/" + uuidN(4, 1) + "/usages: $.usages.CUSTOM_SCRATCH: reference 0, ours 5"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify output lacks %q:\n%s", want, out)
		}
	}
}

// TestAdopt_BadSources: each refused source leaves our database as it
// was.
func TestAdopt_BadSources(t *testing.T) {
	ref := placementtest.StartReference(t)
	fillRich(t, newPlacementAPI(t, ref.URL, ref.Token))
	dir := t.TempDir()
	src := sqlitePath(t, ref.DB)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	wrongHead := filepath.Join(dir, "wrong-head.db")
	writeFile(t, wrongHead, string(data))
	execSQLite(t, wrongHead, `UPDATE alembic_version SET version_num = 'b5c396305c25'`)
	truncated := filepath.Join(dir, "truncated.db")
	writeFile(t, truncated, string(data[:len(data)/3]))

	ours := filepath.Join(dir, "ours.db")
	if code, out := runCmd(t, "db", "import", "--from", ref.DB, "--db", ours); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	before := fileSum(t, ours)
	cases := []struct {
		name, from string
		code       int
		want       string
	}{
		{"wrong head", "sqlite:///" + wrongHead, exitSchema, "alembic revision b5c396305c25, older than the heads this binary reads (422ece571366 (8.0.0), a082b8bb98d0 (15.0.0))"},
		{"truncated", "sqlite:///" + truncated, exitFailure, "malformed"},
		{"unreachable", "mysql+pymysql://placement:secret@127.0.0.1:1/placement", exitFailure, "connect to mysql+pymysql://placement:***@127.0.0.1:1/placement"},
		{"missing file", "sqlite:///" + filepath.Join(dir, "nope.db"), exitFailure, "no such file"},
		{"non-empty target", ref.DB, exitFailure, "target database is not empty: it holds 8 resource providers"},
	}
	for _, c := range cases {
		code, out := runCmd(t, "db", "import", "--from", c.from, "--db", ours)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", c.name, code, c.code, c.want, out)
		}
		if strings.Contains(out, "secret") {
			t.Errorf("%s: the password is in the output:\n%s", c.name, out)
		}
		if fileSum(t, ours) != before {
			t.Fatalf("%s: our database changed", c.name)
		}
	}
	// --replace takes the same source again, and the result still verifies.
	if code, out := runCmd(t, "db", "import", "--from", ref.DB, "--db", ours, "--replace"); code != 0 {
		t.Fatalf("import --replace: exit %d\n%s", code, out)
	}
	if code, out := runCmd(t, "db", "verify", "--against", ref.URL, "--db", ours); code != 0 || !strings.Contains(out, ": 0 differences") {
		t.Fatalf("verify after --replace: exit %d\n%s", code, out)
	}
}

func execSQLite(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// Export reads an existing database only and never overwrites a file.
func TestAdopt_ExportRefusals(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	code, out := runCmd(t, "db", "export", "--to", "sqlite:///"+filepath.Join(dir, "x.sqlite"), "--db", missing)
	if code != exitFailure || !strings.Contains(out, "no such file") {
		t.Errorf("export of a missing database: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("export created %s: %v", missing, err)
	}
	ours := filepath.Join(dir, "ours.db")
	if code, out := runCmd(t, "db", "migrate", "--db", ours); code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, out)
	}
	existing := filepath.Join(dir, "existing.sqlite")
	writeFile(t, existing, "keep me")
	code, out = runCmd(t, "db", "export", "--to", "sqlite:///"+existing, "--db", ours)
	if code != exitFailure || !strings.Contains(out, "file exists") {
		t.Errorf("export over a file: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("export overwrote %s", existing)
	}
	target := filepath.Join(dir, "new.sqlite")
	code, out = runCmd(t, "db", "export", "--to", "sqlite:///"+target, "--release", "9.0.0", "--db", ours)
	if code != exitUsage || !strings.Contains(out, `--release: unknown Placement release "9.0.0" (one of 15.0.0, 8.0.0)`) {
		t.Errorf("export for an unknown release: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("export for an unknown release created %s: %v", target, err)
	}
}
