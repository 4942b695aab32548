package mysql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
)

// TestMigrateTogether: replicas starting at once on an empty database
// all open it, and it ends at the binary's schema version.
func TestMigrateTogether(t *testing.T) {
	db := server.NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			be, err := mysql.Open(context.Background(), server.Config(db), mysql.Options{Migrate: true})
			if err == nil {
				err = be.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	cur, latest, err := mysql.SchemaVersion(context.Background(), server.Config(db))
	if err != nil || cur != latest || latest != mysql.LatestSchemaVersion() {
		t.Fatalf("schema version %d of %d (%v), want %d", cur, latest, err, mysql.LatestSchemaVersion())
	}
}

// TestSchemaRefusals: a database without our tables is refused unless
// migrated, one with others' tables unless adopted, one with a newer
// schema always.
func TestSchemaRefusals(t *testing.T) {
	ctx := context.Background()
	open := func(db string, o mysql.Options) error {
		be, err := mysql.Open(ctx, server.Config(db), o)
		if err == nil {
			be.Close()
		}
		return err
	}
	empty := server.NewDatabase(t)
	if err := open(empty, mysql.Options{}); !errors.Is(err, store.ErrSchemaTooOld) {
		t.Errorf("empty database without Migrate: %v, want store.ErrSchemaTooOld", err)
	}
	foreign := server.NewDatabase(t)
	if err := server.Exec(ctx, foreign, "CREATE TABLE instances (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := open(foreign, mysql.Options{Migrate: true}); !errors.Is(err, store.ErrForeignDatabase) {
		t.Errorf("foreign database: %v, want store.ErrForeignDatabase", err)
	}
	if err := open(foreign, mysql.Options{Migrate: true, Adopt: true}); err != nil {
		t.Errorf("foreign database adopted: %v", err)
	}
	// Placement's own database shares our table names: it is refused even
	// with Adopt, and the message says how to copy it instead.
	own := server.NewDatabase(t)
	if err := server.Exec(ctx, own, "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)",
		"CREATE TABLE resource_providers (id INT PRIMARY KEY, uuid VARCHAR(36))"); err != nil {
		t.Fatal(err)
	}
	for _, adopt := range []bool{false, true} {
		err := open(own, mysql.Options{Migrate: true, Adopt: adopt})
		if !errors.Is(err, store.ErrForeignDatabase) || !strings.Contains(err.Error(), "OpenStack Placement's own") ||
			!strings.Contains(err.Error(), "'placement-syncd db import --from URL --db NEW-PATH-OR-URL'") {
			t.Errorf("Placement's own database, adopt=%v: %v", adopt, err)
		}
	}
	if err := server.Exec(ctx, own, "SELECT count(*) FROM schema_migrations"); err == nil {
		t.Error("refusing Placement's own database created schema_migrations in it")
	}
	if err := server.Exec(ctx, foreign, "INSERT INTO schema_migrations VALUES (99, 'future.sql', 0)"); err != nil {
		t.Fatal(err)
	}
	if err := open(foreign, mysql.Options{Migrate: true}); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("newer schema: %v, want store.ErrSchemaTooNew", err)
	}
}

// TestExactNames: names that a padding or case-insensitive collation
// would merge are distinct keys, as the ledger and SQLite treat them.
func TestExactNames(t *testing.T) {
	db := server.NewDatabase(t)
	be := open(t, server, db)
	defer be.Close()
	if err := server.Exec(context.Background(), db,
		"INSERT INTO traits (name, created_at) VALUES ('CUSTOM_A', 0), ('custom_a', 0), ('CUSTOM_A ', 0), ('CUSTOM_É', 0), ('CUSTOM_E', 0)"); err != nil {
		t.Fatalf("distinct names refused as duplicates: %v", err)
	}
}
