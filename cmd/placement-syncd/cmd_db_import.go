package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/placement-syncd/placement-syncd/adopt/transfer"
	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// cmdDBImport copies an OpenStack Placement database (at 8.0.0's or
// 15.0.0's alembic head) into ours in one transaction. The source is only
// read.
func cmdDBImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, common := newConfigFlagSet("db import", "placement-syncd db import --from URL [--replace] [--config FILE] [--db PATH|URL]", stderr, configSpec{})
	from := f.String("from", "", "OpenStack Placement's database: sqlite:////path/placement.sqlite or mysql+pymysql://user:pass@host/placement")
	replace := f.Bool("replace", false, "discard what our database holds instead of refusing a non-empty one")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	if *from == "" {
		return usageError{errors.New("db import: --from URL is required")}
	}
	src, err := dburl.Parse(*from)
	if err != nil {
		return usageError{err}
	}
	start := time.Now()
	recs, head, err := readUpstream(ctx, src)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "read %s (Placement %s schema, alembic revision %s) in %s\n", src, head.Release, head.Revision, time.Since(start).Round(time.Millisecond))
	if rel := cfg.API.ReleaseValue(); rel != head.Release {
		// Not an error: a cloud may adopt and move release at once.
		fmt.Fprintf(stdout, "note: api.release is %s, so the API will follow %s's rules, not %s's\n", rel, rel, head.Release)
	}
	u, err := cfg.Database.URL()
	if err != nil {
		return usageError{err}
	}
	name := dbName(u)
	be, err := openOurs(ctx, u, cfg.Database, true)
	if err != nil {
		return err
	}
	defer be.Close()
	counts, err := transfer.Import(ctx, be, recs, transfer.Options{Replace: *replace, Progress: func(table string, n int) {
		fmt.Fprintf(stdout, "import: %-28s %d rows\n", table, n)
	}})
	if err != nil {
		return importError(name, err)
	}
	// The release that served these records, so that serve warns when it
	// follows another by default.
	if err := be.SetMetadata(ctx, store.MetaServedRelease, head.Release.String()); err != nil {
		return fmt.Errorf("database %s: %w", name, err)
	}
	if err := be.Close(); err != nil {
		return fmt.Errorf("close database %s: %w", name, err)
	}
	total := 0
	for _, c := range counts {
		total += c.Rows
	}
	fmt.Fprintf(stdout, "imported %d rows from %s into %s in %s\n", total, src, name, time.Since(start).Round(time.Millisecond))
	return nil
}

// openOurs opens our database, the one serve would (database.connection
// or database.path, --db), as the bare store contract: a database file's
// directory is created for an import, and its schema migrated, as serve's
// first start would.
func openOurs(ctx context.Context, u *dburl.URL, db config.DatabaseConfig, migrate bool) (store.Backend, error) {
	return dbstore.OpenBackend(ctx, u, dbstore.Options{Migrate: migrate, Create: migrate, BusyTimeout: db.BusyTimeout})
}

// importError says that nothing changed.
func importError(name string, err error) error {
	err = fmt.Errorf("import into %s: %w; nothing was changed", name, err)
	if errors.Is(err, transfer.ErrNotEmpty) {
		return exitError{code: exitFailure, err: err}
	}
	return err
}

// readUpstream reads a whole Placement database, read-only, and tells
// its schema head.
func readUpstream(ctx context.Context, u *dburl.URL) (*store.Records, upstream.Head, error) {
	db, dialect, err := openUpstream(ctx, u, false)
	if err != nil {
		return nil, upstream.Head{}, err
	}
	defer db.Close()
	recs, head, err := upstream.Read(ctx, db, dialect)
	if err != nil {
		err = fmt.Errorf("read %s: %w", u, err)
		if errors.Is(err, upstream.ErrRevision) {
			return nil, upstream.Head{}, exitError{code: exitSchema, err: err}
		}
		return nil, upstream.Head{}, err
	}
	return recs, head, nil
}

// openUpstream opens the database u names (dbstore.OpenForeign): a file
// read-only (or created new, for export), a server's as given. Its
// dialect follows from where it lives: a file is SQLite.
func openUpstream(ctx context.Context, u *dburl.URL, create bool) (*sql.DB, upstream.Dialect, error) {
	dialect := upstream.MySQL
	if dbstore.File(u) != "" {
		dialect = upstream.SQLite
	}
	db, err := dbstore.OpenForeign(ctx, u, create)
	return db, dialect, err
}
