package dbstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func TestLocate(t *testing.T) {
	u, err := dbstore.Locate("", "/srv/p.db")
	if err != nil || dbstore.File(u) != "/srv/p.db" || dbstore.Name(u) != "/srv/p.db" {
		t.Fatalf("path: %v %v", u, err)
	}
	u, err = dbstore.Locate("mysql+pymysql://u:secret@db/placement", "/ignored.db")
	if err != nil || dbstore.File(u) != "" || dbstore.Name(u) != "mysql+pymysql://u:***@db/placement" {
		t.Fatalf("connection: %v %v", u, err)
	}
	if dbstore.Stat(u) != nil {
		t.Error("a server's database is not judged before connecting")
	}
	if _, err := dbstore.Locate("postgres://db/x", ""); err == nil {
		t.Error("unsupported scheme accepted")
	}
}

// A database file the binary cannot use comes back as a SchemaError that
// carries both versions, with the backend's words.
func TestOpenSchemaError(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new", "p.db")
	if err := dbstore.Stat(dbstore.FileURL(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a missing file: %v", err)
	}
	if _, err := dbstore.OpenFile(ctx, path, dbstore.Options{}); err == nil {
		t.Fatal("opened a file in a missing directory without Create")
	}
	_, err := dbstore.OpenFile(ctx, path, dbstore.Options{Create: true})
	var se *store.SchemaError
	if !errors.As(err, &se) || !errors.Is(err, store.ErrSchemaTooOld) {
		t.Fatalf("want a SchemaError matching ErrSchemaTooOld, got %v", err)
	}
	latest := dbstore.LatestSchemaVersion(dbstore.FileURL(path))
	if se.Current != 0 || se.Latest != latest || latest != dbstore.DefaultSchemaVersion() {
		t.Errorf("versions %d/%d, want 0/%d", se.Current, se.Latest, latest)
	}
	want := fmt.Sprintf("database %s has schema version 0, older than this binary's %d: run 'placement-syncd db migrate': %v", path, latest, store.ErrSchemaTooOld)
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	l, err := dbstore.OpenFile(ctx, path, dbstore.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if cur, _, err := dbstore.SchemaVersion(ctx, dbstore.FileURL(path)); err != nil || cur != latest {
		t.Errorf("after migrating: version %d (%v), want %d", cur, err, latest)
	}
}
