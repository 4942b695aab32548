package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func dbFlags(name string, stderr io.Writer, args []string) (config.Config, error) {
	_, common := newConfigFlagSet("db "+name, "placement-syncd db "+name+" [--config FILE] [--db PATH|URL]", stderr, configSpec{})
	return common.parseLoad(args)
}

// cmdDBMigrate brings the database to the binary's schema version,
// creating an SQLite file if it does not exist (a MySQL database must
// exist). A database that has tables but none of ours is refused unless
// --adopt is given.
func cmdDBMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, common := newConfigFlagSet("db migrate", "placement-syncd db migrate [--config FILE] [--db PATH|URL] [--adopt]", stderr, configSpec{})
	adopt := f.Bool("adopt", false, "add Placement's tables to a database that already has other tables")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	u, name, err := configuredDB(cfg.Database)
	if err != nil {
		return err
	}
	if err := placementOwn(ctx, u); err != nil {
		return err
	}
	before := 0
	if !missingFile(u) {
		if before, _, err = dbstore.SchemaVersion(ctx, u); err != nil {
			return err
		}
	}
	latest := dbstore.LatestSchemaVersion(u)
	if before > latest {
		return schemaMismatch(name, before, latest, "")
	}
	st, err := openStore(ctx, u, cfg.Database, storeMode{migrate: true, adopt: *adopt}, zap.NewNop(), nil)
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("close database %s: %w", name, err)
	}
	if before == latest {
		fmt.Fprintf(stdout, "database %s is already at schema version %d\n", name, latest)
	} else {
		fmt.Fprintf(stdout, "database %s migrated from schema version %d to %d\n", name, before, latest)
	}
	return nil
}

// missingFile reports a database file that does not exist yet.
func missingFile(u *dburl.URL) bool {
	return errors.Is(dbstore.Stat(u), fs.ErrNotExist)
}

// cmdDBVersion prints both schema versions. Like 'serve', it exits 3 when
// they differ, so scripts can test whether a migration is needed.
func cmdDBVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := dbFlags("version", stderr, args)
	if err != nil {
		return err
	}
	u, name, err := configuredDB(cfg.Database)
	if err != nil {
		return err
	}
	if missingFile(u) {
		return fmt.Errorf("database %s does not exist; 'placement-syncd db migrate' or 'serve' creates it", name)
	}
	if err := placementOwn(ctx, u); err != nil {
		return err
	}
	cur, latest, err := dbstore.SchemaVersion(ctx, u)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database: %s\ndatabase schema version: %d\nbinary schema version: %d\n", name, cur, latest)
	if cur != latest {
		return schemaMismatch(name, cur, latest, "")
	}
	return nil
}

// schemaError is a schema mismatch explained for an operator. It unwraps
// to dbstore's sentinel, which selects exit code 3.
type schemaError struct {
	msg  string
	kind error
}

func (e *schemaError) Error() string { return e.msg }
func (e *schemaError) Unwrap() error { return e.kind }

// schemaMismatch explains why the database at path cannot be used as is;
// why says why an older one was not migrated, if that applies.
func schemaMismatch(path string, cur, latest int, why string) error {
	if cur > latest {
		return &schemaError{
			msg: fmt.Sprintf("database %s has schema version %d, newer than schema version %d of this binary (placement-syncd %s); "+
				"it was written by a newer placement-syncd: run that version, or restore a backup taken before the upgrade",
				path, cur, latest, readBuildInfo().Version),
			kind: store.ErrSchemaTooNew,
		}
	}
	if why != "" {
		why = " and " + why
	}
	return &schemaError{
		msg: fmt.Sprintf("database %s has schema version %d, older than schema version %d of this binary%s: "+
			"run 'placement-syncd db migrate' with the same --config/--db", path, cur, latest, why),
		kind: store.ErrSchemaTooOld,
	}
}

// placementOwn fails with store.ErrForeignDatabase (exit 3) when u names
// OpenStack Placement's own database, which no migration of ours makes
// ours: it says which Placement's it is and which import copies it. A
// database that cannot be opened or read is not judged here.
func placementOwn(ctx context.Context, u *dburl.URL) error {
	id, own := placementIdentity(ctx, u)
	if !own {
		return nil
	}
	return &schemaError{
		msg: fmt.Sprintf("database %s is OpenStack Placement's own (%s), not one of placement-syncd's, and no migration makes it one: "+
			"copy it into a database of ours (a new file, or an empty MySQL database) with "+
			"'placement-syncd db import --from %s --db NEW-PATH-OR-URL', then serve that one", dbName(u), id, u),
		kind: store.ErrForeignDatabase,
	}
}

// placementIdentity tells whether u names OpenStack Placement's own
// database, and which; it only reads, and says no when the database
// cannot be opened or read.
func placementIdentity(ctx context.Context, u *dburl.URL) (upstream.Identity, bool) {
	if dbstore.Stat(u) != nil {
		return upstream.Identity{}, false // a file serve or migrate would create
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	db, dialect, err := openUpstream(ctx, u, false)
	if err != nil {
		return upstream.Identity{}, false
	}
	defer db.Close()
	// alembic_version exists but cannot be read: still Placement's.
	id, own, _ := upstream.Identify(ctx, db, dialect)
	return id, own
}

// refusePlacementOwn fails when the connection names OpenStack
// Placement's own database: we do not serve Placement's schema, we serve
// a copy of it in a database of ours. A database that cannot be opened
// or read is not judged here; serve reports it when it opens it.
func refusePlacementOwn(c *config.ConfDatabase) error {
	id, own := placementIdentity(context.Background(), c.URL)
	if !own {
		return nil
	}
	return exitError{code: exitSchema, err: c.Bad("%s is OpenStack Placement's own database (%s), and placement-syncd serves a database of its own: "+
		"copy it with 'placement-syncd db import --from %s --db NEW-PATH-OR-URL' into an empty database of ours, "+
		"then name that database with database.connection (or database.path) in the --config YAML, or --db", c.URL, id, c.URL)}
}

// dbName is how messages name a database (dbstore.Name): a file by its
// path, a database on a server by its URL without the password.
func dbName(u *dburl.URL) string { return dbstore.Name(u) }

// dbDescription is dbName of the configured database, for the start-up
// log; the configuration was validated, so URL does not fail.
func dbDescription(d config.DatabaseConfig) string {
	u, err := d.URL()
	if err != nil {
		return "?"
	}
	return dbName(u)
}

// configuredDB is the database the configuration names and how messages
// name it.
func configuredDB(d config.DatabaseConfig) (*dburl.URL, string, error) {
	u, err := d.URL()
	if err != nil {
		return nil, "", err
	}
	return u, dbName(u), nil
}
