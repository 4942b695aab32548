// Package sqlite stores Placement's records in an SQLite file: it
// implements store.Backend (schema, migrations, connection settings and
// the SQL for each record operation) and holds no Placement rule. Package
// ledger applies those on top; package dbstore composes the two for a
// process.
//
// See DESIGN.md for the reasoning. In short: one connection in WAL mode
// with synchronous=FULL (a committed write survives kill -9), and every
// write transaction is IMMEDIATE.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

// Options configures Open.
type Options struct {
	// Migrate applies pending schema migrations; without it a database
	// behind the binary's schema is refused.
	Migrate bool
	// Adopt lets Migrate add Placement's tables to a database that has
	// other tables and none of ours; without it such a database is
	// refused (store.ErrForeignDatabase), as it is most likely the wrong file.
	Adopt bool
	// BusyTimeout is how long a write waits for another process's lock.
	BusyTimeout time.Duration
	Logger      *zap.Logger
	// Now is the clock for applied_at in schema_migrations; nil means
	// time.Now. (Row timestamps come from the ledger.)
	Now func() time.Time
}

// Backend is the SQLite store.Backend. It is safe for concurrent use;
// transactions are serialized by the single connection.
type Backend struct {
	db   *sql.DB
	log  *zap.Logger
	lock *fileLock
}

// fileURI is path as the path of an SQLite "file:" URI: SQLite
// percent-decodes it, and the driver splits options off at the first
// '?', so those characters are escaped and a path is always a path.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// dsn builds the connection string. PRAGMAs are per connection, so they go
// in the DSN rather than through Exec on a pooled connection.
func dsn(path string, busy time.Duration) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	// Every write is one of a few dozen statements: keep them prepared
	// rather than compiling each again on every execution.
	q.Set("_stmt_cache_size", "64")
	return fileURI(path) + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and checks or
// applies the schema. It first takes the database's lock (ErrLocked
// when another process has it), so that migrations never race and one
// process writes. The caller closes the Backend, or hands it to a
// ledger, which closes it with itself.
func Open(ctx context.Context, path string, opts Options) (*Backend, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", dsn(path, opts.BusyTimeout))
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and the ledger serves
	// reads from memory.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	if err := initSchema(ctx, db, path, opts); err != nil {
		db.Close()
		lock.release()
		return nil, err
	}
	return &Backend{db: db, log: opts.Logger, lock: lock}, nil
}

func initSchema(ctx context.Context, db *sql.DB, path string, opts Options) error {
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	cur, err := schemaVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", path, err)
	}
	if cur == 0 {
		if err := refuseForeign(ctx, db, path, opts.Adopt); err != nil {
			return err
		}
	}
	latest := len(migrations())
	migrate, now := opts.Migrate, opts.Now()
	switch {
	case cur > latest:
		return &store.SchemaError{Database: path, Current: cur, Latest: latest}
	case cur < latest && !migrate:
		return &store.SchemaError{Database: path, Current: cur, Latest: latest}
	case cur < latest:
		if err := applyMigrations(ctx, db, cur, now); err != nil {
			return fmt.Errorf("migrate %s: %w", path, err)
		}
	}
	return nil
}

// refuseForeign fails with store.ErrForeignDatabase when a database without
// our schema already has tables of its own, unless adopt allows it.
// OpenStack Placement's own database (alembic_version) is refused even
// with adopt: its tables have our tables' names, and the way onto it is
// to copy it with 'db import'.
func refuseForeign(ctx context.Context, db *sql.DB, path string, adopt bool) error {
	var placements int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name = 'alembic_version'`).Scan(&placements); err != nil {
		return fmt.Errorf("read tables of %s: %w", path, err)
	}
	if placements > 0 {
		return fmt.Errorf("database %s is OpenStack Placement's own (it has alembic_version), not one of placement-syncd's: "+
			"copy it into a new file with 'placement-syncd db import --from sqlite:///%s --db NEW-PATH-OR-URL' and serve that one (--adopt cannot add our tables beside Placement's, they share names): %w",
			path, path, store.ErrForeignDatabase)
	}
	if adopt {
		return nil
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name LIMIT 5`)
	if err != nil {
		return fmt.Errorf("read tables of %s: %w", path, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("read tables of %s: %w", path, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read tables of %s: %w", path, err)
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("database %s has tables of its own (%s) and no placement-syncd schema: is it the right file? "+
		"'placement-syncd db migrate --adopt' adds Placement's tables to it: %w", path, strings.Join(names, ", "), store.ErrForeignDatabase)
}

// Close closes the database and releases its lock.
func (b *Backend) Close() error {
	err := b.db.Close()
	if lerr := b.lock.release(); err == nil {
		err = lerr
	}
	return err
}

// Begin starts an IMMEDIATE transaction (the DSN's _txlock): it takes the
// write lock at once, so it never fails half-way on a lock upgrade.
func (b *Backend) Begin(ctx context.Context) (store.Tx, error) {
	t, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqlrows.NewTx[sqliteErrors](t), nil
}

// Backend implements the persistence contract.
var _ store.Backend = (*Backend)(nil)
