package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestE2E_OneWriterPerDatabase: while one `serve` holds a database, a
// second `serve` (and `db migrate`) on the same file exits at once,
// naming the holder's PID, instead of serving its own stale copy.
func TestE2E_OneWriterPerDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	first := durStart(t, binary(t), db, filepath.Join(dir, "first.log"))
	pid := strconv.Itoa(first.cmd.Process.Pid)
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--db", db},
		{"db", "migrate", "--db", db},
	} {
		r := runBinary(t, dir, args...)
		if r.code != exitFailure {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", args, r.code, exitFailure, r.stderr)
		}
		if want := "database " + db + " is in use by process " + pid; !strings.Contains(r.stderr, want) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
		}
	}
	first.kill(t) // kill -9: the kernel drops the lock with the process
	if r := runBinary(t, dir, "db", "migrate", "--db", db); r.code != exitOK {
		t.Errorf("db migrate after the holder died: exit %d: %s", r.code, r.stderr)
	}
}

// TestE2E_DatabasePaths: a path is a path, whatever its characters; an
// unwritable directory reports why; someone else's database is refused
// unless adopted.
func TestE2E_DatabasePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	odd := filepath.Join(dir, "odd?mode=ro&_txlock=deferred#x.db")
	if r := runBinary(t, dir, "db", "migrate", "--db", odd); r.code != exitOK {
		t.Errorf("db migrate --db %s: exit %d: %s", odd, r.code, r.stderr)
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
	r := runBinary(t, dir, "db", "migrate", "--db", filepath.Join(ro, "p.db"))
	if r.code != exitFailure || !strings.Contains(r.stderr, "permission denied") || strings.Contains(r.stderr, "no such file") {
		t.Errorf("read-only directory %s: exit %d, want %d and \"permission denied\":\n%s", ro, r.code, exitFailure, r.stderr)
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
		r := runBinary(t, dir, args...)
		if r.code != exitSchema || !strings.Contains(r.stderr, "has tables of its own (invoices)") || !strings.Contains(r.stderr, "db migrate --adopt") {
			t.Errorf("%v on a foreign database: exit %d, want %d:\n%s", args, r.code, exitSchema, r.stderr)
		}
	}
	if r := runBinary(t, dir, "db", "migrate", "--adopt", "--db", foreign); r.code != exitOK {
		t.Errorf("db migrate --adopt: exit %d: %s", r.code, r.stderr)
	}
	if r := runBinary(t, dir, "db", "version", "--db", foreign); r.code != exitOK {
		t.Errorf("db version after adoption: exit %d: %s", r.code, r.stderr)
	}
}
