// Package ledger implements store.Store over any store.Backend: it keeps
// the whole Placement state in memory (providers, inventories, usage,
// traits, aggregates, consumers and allocations) and owns every Placement
// rule for changing it, while the backend only persists rows.
//
// See DESIGN.md. In short: one writer at a time validates against memory,
// writes rows in one backend transaction, and changes memory only after
// the commit, so reads never touch storage and never see uncommitted
// data.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger/replica"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Options configures New.
type Options struct {
	// Now is the clock for created_at/updated_at; nil means time.Now.
	Now func() time.Time
	// Registerer receives the write metrics (metrics.go); nil means a
	// private registry.
	Registerer prometheus.Registerer
}

// Ledger is the Placement state over a backend. It is safe for concurrent
// use.
type Ledger struct {
	be      store.Backend
	now     func() time.Time
	metrics *ledgerMetrics

	// wmu serializes writers end to end (validate, write, commit, apply),
	// so a writer may read st without mu: nobody else changes it.
	wmu sync.Mutex
	// mu guards st against readers while a committed write is applied.
	mu sync.RWMutex
	st *state
	// version counts committed writes (guarded by mu); snap caches the
	// read model built at some version (snapshot.go).
	version uint64
	snap    snapshotCache
	// stale (guarded by wmu) says a commit failed in a way that may
	// have committed: the next write reloads the state first.
	stale bool
	// rep is set when the backend is shared with other replicas through
	// its change feed (replicas.go); nil otherwise. idx, set with it,
	// resolves the ids the feed's operations carry (index.go).
	rep *replica.Replica
	idx *idIndex
}

// New inserts any missing standard trait and resource class, loads every
// record of be into memory and returns the ledger, which owns be from then
// on (Close closes it). On error be is left open for the caller.
func New(ctx context.Context, be store.Backend, opts Options) (*Ledger, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Ledger{be: be, now: opts.Now, metrics: newLedgerMetrics()}
	var err error
	if f, ok := be.(store.Feed); ok {
		err = l.openReplica(ctx, f)
	} else {
		err = l.open(ctx)
	}
	if err != nil {
		return nil, err
	}
	// Registered last, so that a failed New leaves the registry as it was.
	if err := l.metrics.register(opts.Registerer); err != nil {
		return nil, err
	}
	if l.rep != nil {
		if err := l.rep.Register(opts.Registerer); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// open loads a backend this process owns.
func (l *Ledger) open(ctx context.Context) error {
	recs, err := l.be.Load(ctx)
	if err != nil {
		return err
	}
	if err := seedStandard(ctx, l.be, recs, l.now().UTC()); err != nil {
		return fmt.Errorf("insert standard names: %w", err)
	}
	if l.st, _, err = buildState(recs); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// Close closes the backend.
func (l *Ledger) Close() error { return l.be.Close() }

// writeFunc validates a write against l.st (read-only: no other writer
// runs) and issues it in tx; it returns apply, which mutates l.st to match
// and runs only after a successful commit, with readers excluded. A nil
// apply means nothing changed.
type writeFunc func(tx store.Tx, now time.Time) (apply func(), err error)

// write runs fn in one transaction under the writer lock. An error from fn
// rolls everything back.
func (l *Ledger) write(ctx context.Context, fn writeFunc) error {
	return l.writeKind(ctx, false, fn)
}

// writeUsage is write for changes to allocations and inventories only:
// its apply may change provider usage (through attachAllocation /
// detachAllocations, which log the providers), inventories and provider
// generations (logging the providers too), nothing else the read model
// holds, so the next snapshot patches those providers instead of being
// rebuilt (or is rebuilt when a provider's set of classes changed).
func (l *Ledger) writeUsage(ctx context.Context, fn writeFunc) error {
	return l.writeKind(ctx, true, fn)
}

// maxAttempts bounds how often writeKind runs a write that the backend
// aborted for a conflict with other transactions (store.ErrRetry).
const maxAttempts = 5

// writeKind runs fn under the writer lock, again from the start (fresh
// validation, fresh rows) when the backend aborted the transaction for a
// conflict: nothing of an aborted attempt was committed or applied, so a
// retry cannot apply twice.
func (l *Ledger) writeKind(ctx context.Context, usageOnly bool, fn writeFunc) (err error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	start := time.Now()
	defer func() { l.metrics.observeWrite(time.Since(start), err) }()
	retry := writeRetry()
	for attempt := 1; ; attempt++ {
		err = l.attempt(ctx, usageOnly, fn)
		if err == nil || !errors.Is(err, store.ErrRetry) || attempt == retry.Attempts {
			return err
		}
		l.metrics.retries.Inc()
		if retry.Wait(ctx, attempt) != nil {
			return err
		}
	}
}

// writeRetry paces the tries of a write that met another writer: a
// short, growing, jittered pause (n·7..14 ms before retry n) lets the
// other finish rather than meet it again. Its Cap is never reached within
// maxAttempts.
func writeRetry() backoff.Policy {
	return backoff.Policy{Base: 14 * time.Millisecond, Cap: time.Second, Growth: backoff.Linear, Attempts: maxAttempts}
}

// attempt is one run of a write: its transaction, and the apply after a
// commit. A replica catches up with the change feed instead of reloading
// after a commit of unknown outcome: if it committed, its change comes
// back through the feed like another replica's.
func (l *Ledger) attempt(ctx context.Context, usageOnly bool, fn writeFunc) error {
	if l.rep != nil {
		return l.replicaWrite(ctx, usageOnly, fn)
	}
	if l.stale {
		if err := l.reload(ctx); err != nil {
			return fmt.Errorf("reload after a commit of unknown outcome: %w", err)
		}
	}
	_, err := l.writeTx(ctx, usageOnly, fn)
	return err
}

// writeTx runs fn in one transaction, commits and applies; it returns the
// committed transaction. Caller holds wmu.
func (l *Ledger) writeTx(ctx context.Context, usageOnly bool, fn writeFunc) (store.Tx, error) {
	tx, err := l.be.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	apply, err := fn(tx, l.now().UTC())
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		// Not a conflict: the connection may have failed after the
		// server committed, so memory is reloaded before the next write.
		l.stale = l.rep == nil && !errors.Is(err, store.ErrRetry)
		return nil, fmt.Errorf("commit: %w", err)
	}
	if apply != nil {
		l.mu.Lock()
		l.st.usageLog = l.st.usageLog[:0]
		apply()
		l.version++
		l.snap.noteWrite(usageOnly, l.st.usageLog)
		l.mu.Unlock()
	}
	return tx, nil
}

// reload replaces the state by what the backend holds; the read model is
// rebuilt from it.
func (l *Ledger) reload(ctx context.Context) error {
	recs, err := l.be.Load(ctx)
	if err != nil {
		return err
	}
	st, _, err := buildState(recs)
	if err != nil {
		return err
	}
	l.install(st)
	l.stale = false
	return nil
}

// install replaces the whole state by st, a fresh load: the read model
// follows as after any write.
func (l *Ledger) install(st *state) {
	l.mu.Lock()
	l.st = st
	l.version++
	l.snap.noteWrite(false, nil)
	l.mu.Unlock()
}

// read runs fn with readers' access to the state.
func (l *Ledger) read(fn func(st *state) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return fn(l.st)
}

// Ledger implements the whole contract.
var _ store.Store = (*Ledger)(nil)
