package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// cmdDBExport writes our database as an OpenStack Placement database at
// the alembic head of the release that is to serve it: the way back. The
// target must not exist (SQLite) or hold no tables (MySQL).
func cmdDBExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, common := newConfigFlagSet("db export", "placement-syncd db export --to URL [--release "+strings.Join(release.Names(), "|")+"] [--config FILE] [--db PATH|URL]", stderr, configSpec{})
	to := f.String("to", "", "the new Placement database: sqlite:////path/placement.sqlite (must not exist) or mysql+pymysql://user:pass@host/placement (must have no tables)")
	rel := f.String("release", "", "the upstream Placement release that will serve the export, whose schema head it gets: "+
		strings.Join(release.Names(), " or ")+" (default: api.release)")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	if *to == "" {
		return usageError{errors.New("db export: --to URL is required")}
	}
	dst, err := dburl.Parse(*to)
	if err != nil {
		return usageError{err}
	}
	head, err := releaseHead(*rel, cfg.API)
	if err != nil {
		return usageError{fmt.Errorf("db export: --release: %w", err)}
	}
	u, err := cfg.Database.URL()
	if err != nil {
		return usageError{err}
	}
	name := dbName(u)
	if err := requireDatabase(u); err != nil {
		return err
	}
	start := time.Now()
	be, err := openOurs(ctx, u, cfg.Database, false)
	if err != nil {
		return err
	}
	recs, err := be.Load(ctx)
	be.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	db, dialect, err := openUpstream(ctx, dst, true)
	if err != nil {
		return err
	}
	defer db.Close()
	if dialect == upstream.MySQL {
		if err := upstream.RequireEmpty(ctx, db); err != nil {
			return fmt.Errorf("export to %s: %w", dst, err)
		}
	}
	if err := upstream.Write(ctx, db, dialect, head, recs, time.Now()); err != nil {
		return exportFailed(ctx, dst, db, dialect, err)
	}
	fmt.Fprintf(stdout, "exported %d providers, %d consumers, %d allocations from %s to %s (Placement %s schema, alembic revision %s) in %s\n",
		len(recs.Providers), len(recs.Consumers), len(recs.Allocations), name, dst, head.Release, head.Revision, time.Since(start).Round(time.Millisecond))
	return nil
}

// releaseHead is the schema head of the release a flag names, or of
// api.release when it names none.
func releaseHead(flagValue string, api config.APIConfig) (upstream.Head, error) {
	if flagValue == "" {
		return upstream.HeadOf(api.ReleaseValue()), nil
	}
	r, err := release.Parse(flagValue)
	if err != nil {
		return upstream.Head{}, err
	}
	return upstream.HeadOf(r), nil
}

// exportFailed undoes a failed export: the new SQLite file is removed,
// MySQL's new tables dropped.
func exportFailed(ctx context.Context, dst *dburl.URL, db *sql.DB, d upstream.Dialect, err error) error {
	err = fmt.Errorf("export to %s: %w", dst, err)
	if d == upstream.MySQL {
		if derr := upstream.DropAll(ctx, db); derr != nil {
			return fmt.Errorf("%w; dropping the new tables failed too: %v", err, derr)
		}
		return err
	}
	db.Close()
	if rerr := os.Remove(dst.Path); rerr != nil {
		return fmt.Errorf("%w; removing %s failed too: %v", err, dst.Path, rerr)
	}
	return err
}

// requireDatabase fails unless our database file exists: reading a
// missing one would create it empty. A database on a server is checked
// by opening it.
func requireDatabase(u *dburl.URL) error {
	if err := dbstore.Stat(u); err != nil {
		return fmt.Errorf("database %s: %w", dbName(u), err)
	}
	return nil
}
