package main

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// bumpSchema makes the database at path look as if a newer binary had
// migrated it, the way a downgrade would meet it.
func bumpSchema(t *testing.T, path string, to int) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from-the-future.sql', 0)`, to); err != nil {
		t.Fatal(err)
	}
}

func TestE2E_StartupErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "unknown.yaml"), "api:\n  listen: \"127.0.0.1:0\"\n\n  listn: \"127.0.0.1:8778\"\n")
	writeFile(t, filepath.Join(dir, "badvalue.yaml"), "log:\n  level: info\ndatabase:\n  path: p.db\n  busy_timeout: forever\n")
	writeFile(t, filepath.Join(dir, "badaddr.yaml"), "api:\n  listen: \"127.0.0.1\"\n")
	writeFile(t, filepath.Join(dir, "nomigrate.yaml"), "database:\n  path: old.db\n  auto_migrate: false\n")
	writeFile(t, filepath.Join(dir, "old.db"), "") // an empty file is schema version 0

	// A database from a newer binary: migrate a copy, then bump its version.
	if r := syncd.Exec(t, dir, "db", "migrate", "--db", "new.db"); r.Code != 0 {
		t.Fatalf("db migrate: exit %d: %s", r.Code, r.Stderr)
	}
	bumpSchema(t, filepath.Join(dir, "new.db"), 99)

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{name: "unknown key", args: []string{"serve", "--config", "unknown.yaml"}, code: exitUsage,
			want: []string{`unknown.yaml:4: unknown key "listn" in section "api"`}},
		{name: "bad value", args: []string{"serve", "--config", "badvalue.yaml"}, code: exitUsage,
			want: []string{`badvalue.yaml:5: database.busy_timeout: invalid value "forever"`}},
		{name: "invalid address", args: []string{"serve", "--config", "badaddr.yaml"}, code: exitUsage,
			want: []string{`badaddr.yaml:2: api.listen: invalid address "127.0.0.1"`}},
		{name: "bad flag value", args: []string{"serve", "--listen", "nowhere"}, code: exitUsage,
			want: []string{`flag --listen: invalid address "nowhere"`}},
		{name: "missing config file", args: []string{"serve", "--config", "absent.yaml"}, code: exitUsage,
			want: []string{"absent.yaml: no such file or directory"}},
		{name: "newer database", args: []string{"serve", "--db", "new.db", "--listen", "127.0.0.1:0"}, code: exitSchema,
			want: []string{"database new.db has schema version 99, newer than schema version 2 of this binary", "placement-syncd " + testVersion}},
		{name: "newer database, db migrate", args: []string{"db", "migrate", "--db", "new.db"}, code: exitSchema,
			want: []string{"schema version 99, newer than schema version 2"}},
		{name: "older database without auto_migrate", args: []string{"serve", "--config", "nomigrate.yaml", "--listen", "127.0.0.1:0"}, code: exitSchema,
			want: []string{"database old.db has schema version 0, older than schema version 2 of this binary and database.auto_migrate is false", "run 'placement-syncd db migrate'"}},
		{name: "unknown command", args: []string{"serv"}, code: exitUsage, want: []string{`unknown command "serv"`}},
		{name: "unknown flag", args: []string{"serve", "--lissten", "x"}, code: exitUsage, want: []string{"flag provided but not defined: -lissten"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := syncd.Exec(t, dir, tt.args...)
			if r.Code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", r.Code, tt.code, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}

func TestE2E_Version(t *testing.T) {
	t.Parallel()
	r := syncd.Exec(t, t.TempDir(), "version")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, w := range []string{"placement-syncd " + testVersion, "commit: " + testCommit, "go: go1.", "schema version: 2"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("stdout does not contain %q:\n%s", w, r.Stdout)
		}
	}
}

// TestE2E_ServeAndTerminate starts the binary, makes a request, and checks
// that SIGTERM ends it cleanly with exit code 0.
func TestE2E_ServeAndTerminate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := syncd.Start(t, daemontest.Options{Dir: dir, Args: []string{"serve", "--listen", "127.0.0.1:0", "--db", "data/p.db"}})
	d.API.MustDo(t, http.StatusOK, http.MethodGet, "/", nil)
	if code := d.Stop(t); code != 0 {
		t.Fatalf("after SIGTERM: exit %d\n%s", code, d.Log)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "p.db")); err != nil {
		t.Errorf("database not created: %v", err)
	}
}
