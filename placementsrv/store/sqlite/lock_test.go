package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestOneOpenPerDatabase: a second Open of a held database fails with
// ErrLocked naming the holder's PID; after Close it opens again.
func TestOneOpenPerDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	first, err := Open(context.Background(), path, Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), path, Options{Migrate: true})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "in use by process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Open: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), path, Options{Migrate: true})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

// TestForeignDatabase: tables that are not ours make Open refuse the file
// unless Adopt is set.
func TestForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other?x=1.db")
	db, err := sql.Open("sqlite3", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file is not under its own name: %v", err)
	}
	if _, err := Open(context.Background(), path, Options{Migrate: true}); !errors.Is(err, store.ErrForeignDatabase) {
		t.Fatalf("Open: %v, want store.ErrForeignDatabase", err)
	}
	be, err := Open(context.Background(), path, Options{Migrate: true, Adopt: true})
	if err != nil {
		t.Fatalf("Open with Adopt: %v", err)
	}
	be.Close()
	if cur, latest, err := SchemaVersion(context.Background(), path); err != nil || cur != latest {
		t.Fatalf("SchemaVersion after adoption: %d of %d, %v", cur, latest, err)
	}
}

// TestPlacementsOwnDatabase: OpenStack Placement's own file is refused
// even with Adopt, with the way onto it in the message, and gains no
// table of ours.
func TestPlacementsOwnDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "placement.sqlite")
	db, err := sql.Open("sqlite3", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL); CREATE TABLE resource_providers (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, adopt := range []bool{false, true} {
		_, err := Open(context.Background(), path, Options{Migrate: true, Adopt: adopt})
		if !errors.Is(err, store.ErrForeignDatabase) || !strings.Contains(err.Error(), "db import --from sqlite:///"+path+" --db NEW-PATH-OR-URL'") {
			t.Fatalf("Open (adopt %v): %v, want store.ErrForeignDatabase with the import command", adopt, err)
		}
	}
	if cur, _, err := SchemaVersion(context.Background(), path); err != nil || cur != 0 {
		t.Fatalf("schema version after refusals: %d, %v; want 0 (nothing of ours added)", cur, err)
	}
}
