package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// TestE2E_OneWriterPerDatabase: while one `serve` holds a database, a
// second `serve` (and `db migrate`) on the same file exits at once,
// naming the holder's PID, instead of serving its own stale copy.
func TestE2E_OneWriterPerDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	first := syncd.Start(t, daemontest.Options{Args: serveArgs(db)})
	pid := strconv.Itoa(first.Pid(t))
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--db", db},
		{"db", "migrate", "--db", db},
	} {
		r := syncd.Exec(t, dir, args...)
		if r.Code != exitFailure {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", args, r.Code, exitFailure, r.Stderr)
		}
		if want := "database " + db + " is in use by process " + pid; !strings.Contains(r.Stderr, want) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.Stderr)
		}
	}
	first.Kill(t) // kill -9: the kernel drops the lock with the process
	if r := syncd.Exec(t, dir, "db", "migrate", "--db", db); r.Code != exitOK {
		t.Errorf("db migrate after the holder died: exit %d: %s", r.Code, r.Stderr)
	}
}

// TestE2E_DatabasePaths: a path is a path, whatever its characters; an
// unwritable directory reports why; someone else's database is refused
// unless adopted.
func TestE2E_DatabasePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	odd := filepath.Join(dir, "odd?mode=ro&_txlock=deferred#x.db")
	if r := syncd.Exec(t, dir, "db", "migrate", "--db", odd); r.Code != exitOK {
		t.Errorf("db migrate --db %s: exit %d: %s", odd, r.Code, r.Stderr)
	}
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("the database was not created under its own name: %v", err)
	}

	// Root ignores directory modes; sysfs refuses new files even to root.
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		ro = "/sys"
	}
	r := syncd.Exec(t, dir, "db", "migrate", "--db", filepath.Join(ro, "p.db"))
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "permission denied") || strings.Contains(r.Stderr, "no such file") {
		t.Errorf("read-only directory %s: exit %d, want %d and \"permission denied\":\n%s", ro, r.Code, exitFailure, r.Stderr)
	}

	foreign := filepath.Join(dir, "app.db")
	sqldb, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec(`CREATE TABLE invoices (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	sqldb.Close()
	for _, args := range [][]string{{"serve", "--listen", "127.0.0.1:0", "--db", foreign}, {"db", "migrate", "--db", foreign}} {
		r := syncd.Exec(t, dir, args...)
		if r.Code != exitSchema || !strings.Contains(r.Stderr, "has tables of its own (invoices)") || !strings.Contains(r.Stderr, "db migrate --adopt") {
			t.Errorf("%v on a foreign database: exit %d, want %d:\n%s", args, r.Code, exitSchema, r.Stderr)
		}
	}
	if r := syncd.Exec(t, dir, "db", "migrate", "--adopt", "--db", foreign); r.Code != exitOK {
		t.Errorf("db migrate --adopt: exit %d: %s", r.Code, r.Stderr)
	}
	if r := syncd.Exec(t, dir, "db", "version", "--db", foreign); r.Code != exitOK {
		t.Errorf("db version after adoption: exit %d: %s", r.Code, r.Stderr)
	}
}
