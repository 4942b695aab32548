// Package dbstore opens the Placement store a process serves, on the
// database a URL names (package internal/dburl): the rules of package
// ledger over the SQLite backend (store/sqlite) for sqlite:// and over
// the MySQL backend (store/mysql) for mysql:// and mysql+pymysql://. It
// is the one place that knows every backend: the process
// (cmd/placement-syncd) chooses by configuration alone and asks this
// package, in terms that fit any backend, whatever depends on which one
// it is (whether a database exists yet, how messages name it, which
// schema version the binary writes); tests that want a file open one
// with OpenFile.
package dbstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	// Create makes the directory of a database that is a local file when
	// it is missing (the file itself is created by opening it); a
	// database on a server must exist already.
	Create bool
	// BusyTimeout is how long an SQLite write waits for another
	// process's lock; MySQL ignores it.
	BusyTimeout time.Duration
	Logger      *zap.Logger
	// Rules configures the ledger.
	Rules ledger.Options
}

// Open opens the database u names, checks or migrates its schema, and
// returns the ledger over it: every record loaded, missing standard
// traits and resource classes inserted. Closing the ledger closes the
// database. An SQLite file is locked by the process (one writer per
// file); a MySQL database is meant to be shared by several processes.
// A schema the binary cannot use is a *store.SchemaError.
func Open(ctx context.Context, u *dburl.URL, opts Options) (*ledger.Ledger, error) {
	be, err := OpenBackend(ctx, u, opts)
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

// OpenFile is Open on the SQLite file at path, for tests and tools that
// want a store of their own.
func OpenFile(ctx context.Context, path string, opts Options) (*ledger.Ledger, error) {
	return Open(ctx, FileURL(path), opts)
}

// OpenBackend opens the database u names as the bare store contract,
// without the ledger's rules, for a command that writes one whole
// transaction through the contract ('db import') or reads the database
// whole ('db export'). Schema errors are as Open's.
func OpenBackend(ctx context.Context, u *dburl.URL, opts Options) (store.Backend, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	switch u.Driver {
	case dburl.SQLite:
		if opts.Create {
			if err := makeDir(u.Path); err != nil {
				return nil, err
			}
		}
		return sqlite.Open(ctx, u.Path, sqlite.Options{Migrate: opts.Migrate, Adopt: opts.Adopt,
			BusyTimeout: opts.BusyTimeout, Logger: opts.Logger})
	case dburl.MySQL:
		return mysql.Open(ctx, u.MySQL, mysql.Options{Migrate: opts.Migrate, Adopt: opts.Adopt, Logger: opts.Logger})
	}
	return nil, fmt.Errorf("database %s: no store for driver %q", u, u.Driver)
}

func makeDir(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create database directory: %w", err)
		}
	}
	return nil
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

// LatestSchemaVersion is the schema version this binary writes to the
// database u names.
func LatestSchemaVersion(u *dburl.URL) int {
	if u.Driver == dburl.MySQL {
		return mysql.LatestSchemaVersion()
	}
	return sqlite.LatestSchemaVersion()
}

// DefaultSchemaVersion is the schema version this binary writes to the
// database a configuration names by default, an SQLite file.
func DefaultSchemaVersion() int { return sqlite.LatestSchemaVersion() }
