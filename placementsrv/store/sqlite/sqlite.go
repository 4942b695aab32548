// Package sqlite implements store.Store on an SQLite file.
//
// See DESIGN.md for the reasoning. In short: one writer connection in WAL
// mode with synchronous=FULL (a committed write survives kill -9); every
// write is one IMMEDIATE transaction; the whole state is also held in memory
// (state.go), loaded at open and changed only after a commit, so reads never
// touch SQL and never see uncommitted data.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"

	"github.com/placement-syncd/placement-syncd/metrics"
)

// Options configures Open.
type Options struct {
	// Migrate applies pending schema migrations; without it a database
	// behind the binary's schema is refused.
	Migrate bool
	// BusyTimeout is how long a write waits for another process's lock.
	BusyTimeout time.Duration
	Logger      *zap.Logger
	// Now is the clock for created_at/updated_at; nil means time.Now.
	Now func() time.Time
	// Registerer receives the store's metrics (metrics.go); nil means a
	// private registry.
	Registerer prometheus.Registerer
}

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	log     *zap.Logger
	now     func() time.Time
	metrics *storeMetrics

	// wmu serializes writers end to end (validate, SQL, commit, apply),
	// so a writer may read st without mu: nobody else changes it.
	wmu sync.Mutex
	// mu guards st against readers while a committed write is applied.
	mu sync.RWMutex
	st *state
	// version counts committed writes (guarded by mu); snap caches the
	// read model built at some version (snapshot.go).
	version uint64
	snap    snapshotCache
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
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path, checks or applies
// the schema, inserts missing standard traits and resource classes, and
// loads the state into memory.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, err := sql.Open("sqlite3", dsn(path, opts.BusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and reads are served
	// from memory.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, log: opts.Logger, now: opts.Now, metrics: newStoreMetrics()}
	if err := s.init(ctx, path, opts.Migrate); err != nil {
		db.Close()
		return nil, err
	}
	// Registered last, so that a failed Open leaves the registry as it was.
	if err := s.metrics.register(metrics.Private(opts.Registerer)); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context, path string, migrate bool) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	cur, err := schemaVersion(ctx, s.db)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", path, err)
	}
	latest := len(migrations())
	switch {
	case cur > latest:
		return fmt.Errorf("database %s has schema version %d, newer than this binary's %d: %w", path, cur, latest, ErrSchemaTooNew)
	case cur < latest && !migrate:
		return fmt.Errorf("database %s has schema version %d, older than this binary's %d: run 'placement-syncd db migrate': %w", path, cur, latest, ErrSchemaTooOld)
	case cur < latest:
		if err := applyMigrations(ctx, s.db, cur, s.now()); err != nil {
			return fmt.Errorf("migrate %s: %w", path, err)
		}
	}
	if err := s.seedStandard(ctx); err != nil {
		return fmt.Errorf("insert standard names into %s: %w", path, err)
	}
	st, err := load(ctx, s.db)
	if err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	s.st = st
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// ErrSchemaTooNew and ErrSchemaTooOld report a schema the binary cannot use.
var (
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
	ErrSchemaTooOld = errors.New("database schema is older than this binary")
)

// write runs fn in one transaction under the writer lock. fn validates
// against s.st (read-only: no other writer runs) and issues SQL; it returns
// apply, which mutates s.st to match and runs only after a successful
// commit, with readers excluded. An error from fn rolls everything back.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx, now time.Time) (apply func(), err error)) error {
	return s.writeKind(ctx, false, fn)
}

// writeUsage is write for changes to allocations only: its apply may
// change provider usage (through attachAllocation / detachAllocations,
// which log the providers) and provider generations (generations.apply),
// nothing else the read model holds, so the next snapshot patches those
// providers instead of being rebuilt.
func (s *Store) writeUsage(ctx context.Context, fn func(tx *sql.Tx, now time.Time) (apply func(), err error)) error {
	return s.writeKind(ctx, true, fn)
}

func (s *Store) writeKind(ctx context.Context, usageOnly bool, fn func(tx *sql.Tx, now time.Time) (apply func(), err error)) (err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	start := time.Now()
	defer func() { s.metrics.observeWrite(time.Since(start), err) }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	apply, err := fn(tx, s.now().UTC())
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if apply != nil {
		s.mu.Lock()
		s.st.usageLog = s.st.usageLog[:0]
		apply()
		s.version++
		s.snap.noteWrite(usageOnly, s.st.usageLog)
		s.mu.Unlock()
	}
	return nil
}

// read runs fn with readers' access to the state.
func (s *Store) read(fn func(st *state) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(s.st)
}

// nanos and fromNanos convert times for storage.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// Store implements the whole contract.
var _ store.Store = (*Store)(nil)
