// Package mysql stores Placement's records in a MySQL or MariaDB database
// (Galera included): it implements store.Backend (schema, migrations,
// connection settings, the SQL for each record operation and the mapping
// of server errors to the contract's kinds) and holds no Placement rule.
// Package ledger applies those on top; package dbstore composes the two
// for a process.
//
// Tables are InnoDB, utf8mb4 with an exact collation (binary and no-pad:
// "a" and "a " and "A" are three names), because the ledger compares
// names and uuids byte for byte, as SQLite does and as the reference
// answers; a case-insensitive collation (the server default, and what
// Placement's own tables get) would make the database refuse a name the
// ledger accepted.
//
// Retries. A transaction the server aborts because of other transactions
// (deadlock 1213, lock wait timeout 1205, Galera's certification failure,
// which reports 1213 at COMMIT, and a node not ready, 1047, or a failed
// COMMIT, 1180) fails with an error matching store.ErrRetry, after which
// nothing of it is committed. The retry lives in the ledger, not here: the
// ledger rolls back and runs the whole write again, validating it anew
// against memory and issuing fresh rows. Replaying the recorded
// operations here instead would not be idempotent, because InnoDB does not
// give back auto-increment ids on rollback: a replayed insert gets a new
// id while the ledger already holds the first one. A COMMIT that fails
// any other way (the connection lost) may have committed; the ledger
// reloads its state before its next write.
//
// Connections are pooled by database/sql; a server restart costs the
// requests that reach it while it is down (their transactions fail and
// are rolled back by the server), and the pool reconnects afterwards.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
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
	// refused (store.ErrForeignDatabase), as it is most likely the wrong one.
	Adopt bool
	// MaxOpenConns bounds the pool; 0 means 16. The ledger writes
	// through one connection at a time; the others serve Load and the
	// callers of this package that read (a change feed, a leader lock).
	MaxOpenConns int
	Logger       *zap.Logger
	// Now is the clock for applied_at in schema_migrations; nil means
	// time.Now. (Row timestamps come from the ledger.)
	Now func() time.Time
}

// Backend is the MySQL store.Backend. It is safe for concurrent use.
type Backend struct {
	db *sql.DB
	// wdb is the writers' pool: sessions with autocommit off (session.go).
	wdb  *sql.DB
	name string // host:port/database, for messages (never the password)
	log  *zap.Logger
}

// Name is how messages name the database of cfg: address and database,
// without user or password.
func Name(cfg *mysql.Config) string { return cfg.Addr + "/" + cfg.DBName }

// connConfig is cfg with the settings the backend relies on.
func connConfig(cfg *mysql.Config) *mysql.Config {
	c := cfg.Clone()
	// Matched rows, not changed rows: an update to the values a row
	// already has still counts (the contract's UpdateInventory).
	c.ClientFoundRows = true
	// One round trip per statement instead of prepare, execute, close.
	c.InterpolateParams = true
	// A read-only server (a demoted primary) closes the connection, so
	// the pool dials again, perhaps to the new primary.
	c.RejectReadOnly = true
	c.CheckConnLiveness = true
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	// Strict mode (no silent truncation) and an explicit id 0 stays 0.
	c.Params["sql_mode"] = "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO'"
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	// A server that vanished without closing the connection (a host
	// down, a partition) must not hold the ledger's writer forever; the
	// bound exceeds InnoDB's default lock wait (50 s), which a statement
	// may spend waiting without a byte on the wire.
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 60 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 60 * time.Second
	}
	return c
}

// Open connects to the database of cfg (which must exist) and checks or
// applies the schema; migrations hold a named server lock, so replicas
// starting together migrate once. The caller closes the Backend, or
// hands it to a ledger, which closes it with itself.
func Open(ctx context.Context, cfg *mysql.Config, opts Options) (*Backend, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxOpenConns <= 0 {
		opts.MaxOpenConns = 16
	}
	name := Name(cfg)
	db, wdb, err := openPools(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	for _, p := range []*sql.DB{db, wdb} {
		p.SetMaxOpenConns(opts.MaxOpenConns)
		p.SetMaxIdleConns(opts.MaxOpenConns)
		// Below the servers' wait_timeout (8 h) and HAProxy's usual idle
		// timeouts, so that the pool retires connections before they do.
		p.SetConnMaxLifetime(30 * time.Minute)
		p.SetConnMaxIdleTime(5 * time.Minute)
	}
	if err := initSchema(ctx, db, name, opts); err != nil {
		db.Close()
		wdb.Close()
		return nil, err
	}
	return &Backend{db: db, wdb: wdb, name: name, log: opts.Logger}, nil
}

// DB is the connection pool, for packages that keep their own tables
// beside the store's in the same database.
func (b *Backend) DB() *sql.DB { return b.db }

// Close closes the pools.
func (b *Backend) Close() error { return errors.Join(b.db.Close(), b.wdb.Close()) }

// Begin starts a transaction at the sessions' READ COMMITTED (openPools)
// on the writers' pool.
func (b *Backend) Begin(ctx context.Context) (store.Tx, error) {
	s, err := b.beginSession(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return &tx{sqlrows.NewTx[mysqlErrors](s), s}, nil
}

// openPools opens the connection pools of cfg, the writers' with
// autocommit off (session.go), with every session at READ COMMITTED, set
// once per connection rather than before each transaction (a round trip
// saved per write). Its updates lock the rows they touch and no gaps
// between them: REPEATABLE READ would lock the range a DELETE searched,
// so that a writer paused mid-transaction could hold up others' inserts
// of unrelated rows next to it. The compare-and-swaps read the latest
// committed values either way. The variable's name depends on the server
// (MariaDB before 11.1 knows only tx_isolation, MySQL 8 only
// transaction_isolation).
func openPools(ctx context.Context, cfg *mysql.Config) (db, wdb *sql.DB, err error) {
	c := connConfig(cfg)
	probe, err := mysql.NewConnector(c)
	if err != nil {
		return nil, nil, err
	}
	pdb := sql.OpenDB(probe)
	variable := "transaction_isolation"
	var level string
	err = pdb.QueryRowContext(ctx, `SELECT @@transaction_isolation`).Scan(&level)
	pdb.Close()
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == errUnknownSystemVariable:
		variable = "tx_isolation"
	case err != nil:
		return nil, nil, err
	}
	c.Params[variable] = "'READ-COMMITTED'"
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, nil, err
	}
	w := c.Clone()
	w.Params["autocommit"] = "0"
	// A change's insert and COMMIT go as one batch (session.commitWith).
	w.MultiStatements = true
	wconn, err := mysql.NewConnector(w)
	if err != nil {
		return nil, nil, err
	}
	return sql.OpenDB(conn), sql.OpenDB(wconn), nil
}

// fromNanos reads a stored time: Unix nanoseconds, NULL for the zero
// time.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// Backend implements the persistence contract.
var _ store.Backend = (*Backend)(nil)
