// Package dbstore opens the Placement store a process serves, on the
// database a URL names (package internal/dburl): the rules of package
// ledger over the SQLite backend (store/sqlite) for sqlite:// and over
// the MySQL backend (store/mysql) for mysql:// and mysql+pymysql://. It
// is the one place that knows every backend, so that the process
// (cmd/placement-syncd) chooses by configuration alone; package
// sqlitestore remains the shorter way for tests that want a file.
package dbstore

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// Options configures Open.
type Options struct {
	// Migrate applies pending schema migrations; Adopt lets them add our
	// tables to a database that has others (see the backends' Options).
	Migrate, Adopt bool
	// BusyTimeout is how long an SQLite write waits for another
	// process's lock; MySQL ignores it.
	BusyTimeout time.Duration
	Logger      *zap.Logger
	// Rules configures the ledger.
	Rules ledger.Options
}

// Open opens the database u names, checks or migrates its schema, and
// returns the ledger over it; closing the ledger closes the database.
// An SQLite file is locked by the process (one writer per file); a MySQL
// database is meant to be shared by several processes.
func Open(ctx context.Context, u *dburl.URL, opts Options) (*ledger.Ledger, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	be, err := openBackend(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	l, err := ledger.New(ctx, be, opts.Rules)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("open database %s: %w", u, err)
	}
	return l, nil
}

// OpenBackend opens the database u names as the bare store contract,
// without the ledger's rules, for a command that writes one whole
// transaction through the contract ('db import') or reads the database
// whole ('db export'). Schema errors match this package's sentinels.
func OpenBackend(ctx context.Context, u *dburl.URL, opts Options) (store.Backend, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	be, err := openBackend(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	return be, nil
}

func openBackend(ctx context.Context, u *dburl.URL, opts Options) (store.Backend, error) {
	switch u.Driver {
	case dburl.SQLite:
		return sqlite.Open(ctx, u.Path, sqlite.Options{Migrate: opts.Migrate, Adopt: opts.Adopt,
			BusyTimeout: opts.BusyTimeout, Logger: opts.Logger})
	case dburl.MySQL:
		return mysql.Open(ctx, u.MySQL, mysql.Options{Migrate: opts.Migrate, Adopt: opts.Adopt, Logger: opts.Logger})
	}
	return nil, fmt.Errorf("database %s: no store for driver %q", u, u.Driver)
}

// SchemaVersion reports the schema version of the database u names and
// the binary's for that driver; it changes nothing.
func SchemaVersion(ctx context.Context, u *dburl.URL) (current, latest int, err error) {
	switch u.Driver {
	case dburl.SQLite:
		return sqlite.SchemaVersion(ctx, u.Path)
	case dburl.MySQL:
		return mysql.SchemaVersion(ctx, u.MySQL)
	}
	return 0, 0, fmt.Errorf("database %s: no store for driver %q", u, u.Driver)
}

// LatestSchemaVersion is the schema version this binary writes for d.
func LatestSchemaVersion(d dburl.Driver) int {
	if d == dburl.MySQL {
		return mysql.LatestSchemaVersion()
	}
	return sqlite.LatestSchemaVersion()
}
