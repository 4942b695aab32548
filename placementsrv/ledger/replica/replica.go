// Package replica is a ledger's replication: it makes the ledger one
// replica of several sharing a database through the backend's change feed
// (store.Feed). It records each write's row operations and appends them to
// the feed, reads the others' changes, tracks which it holds (a frontier,
// a top and the holes between), closes holes with tombstones, prunes, and
// keeps reads consistent. Its failure model is the shared database's
// (writers of other processes, paused or dead mid-commit); Placement's
// rules stay in the ledger, which it reaches only through State.
//
// See ../DESIGN.md, "Replicas".
package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// State is what a replica needs of the ledger's memory; the ledger
// implements it.
type State interface {
	// Lock and Unlock are the ledger's writer lock: one writer at a time,
	// end to end. The replica holds it to change its position and to
	// apply changes; the ledger holds it around Write.
	sync.Locker
	// Apply runs batch with readers excluded; the operations batch hands
	// to apply form one write version of memory. batch returns how many
	// changes it applied. An error leaves memory partly patched: the
	// replica then reloads (Replace).
	Apply(batch func(apply func(feed.Op) error) (int, error)) (int, error)
	// Replace swaps memory for the records of a fresh load, with readers
	// excluded.
	Replace(recs *store.Records) error
	// NoteLocal hears the operations of a write of this process that
	// committed and that its write path already applied to memory.
	NoteLocal(ops []feed.Op)
}

// Config is what Open needs.
type Config struct {
	Feed store.Feed
	// Backend is the backend as given to the ledger (Shared).
	Backend store.Backend
	State   State
	// Seed inserts the missing standard names through be, given the
	// records of a load.
	Seed func(ctx context.Context, be store.Backend, recs *store.Records) error
	// Retry paces a write re-run after catching up: the ledger's pause
	// between tries of a write (its Attempts is the replica's own,
	// maxWriteAttempts).
	Retry backoff.Policy
}

// feedBatch is how many changes one read of the feed returns at most.
const feedBatch = 500

// maxWriteAttempts bounds how often a write that failed while memory was
// behind the database is re-run after catching up.
const maxWriteAttempts = 8

// seedRetry bounds the loads that lost a race with another replica
// seeding the same standard names: 3 tries, at once (the other has
// committed: load again).
func seedRetry() backoff.Policy { return backoff.Policy{Attempts: 3} }

// Replica is a ledger's follower state; only the holder of the writer
// lock uses it, but for the fields said otherwise.
type Replica struct {
	state State
	feed  store.Feed
	// be records and appends every transaction (Backend).
	be    feedBackend
	retry backoff.Policy
	// pos is which changes memory holds.
	pos *feedPos
	// view mirrors pos for readers that do not hold the writer lock
	// (Fresh).
	view atomic.Pointer[posView]
	// consistentReads makes Fresh catch up (SetConsistentReads).
	consistentReads atomic.Bool
	// confirmed is when (unix nanoseconds) the last read of the feed that
	// found memory complete began (LastConfirmed).
	confirmed atomic.Int64
	// own are this replica's commits not applied yet (any goroutine).
	own *ownCommits
	// reads shares reads of the feed between callers (Fresh, Poll).
	reads *feedReads
	// settledAt is when Settle last raised the settled mark.
	settledAt time.Time
	metrics   *feedMetrics
	// shared is the backend as given to the ledger.
	shared store.Backend
}

type feedMetrics struct {
	set        *metrics.Set
	lag        prometheus.Observer
	applied    prometheus.Counter
	reloads    prometheus.Counter
	retries    prometheus.Counter
	errors     prometheus.Counter
	position   prometheus.Gauge
	holes      prometheus.Gauge
	tombstones prometheus.Counter
}

func newFeedMetrics() *feedMetrics {
	s := metrics.NewSet("store")
	return &feedMetrics{
		set: s,
		lag: s.HistogramVec("feed_lag_seconds",
			"Time from another replica's commit of a change (the database's clock) to its apply to this replica's memory.",
			metrics.LatencyBuckets()).WithLabelValues(),
		applied:    s.Counter("feed_changes_applied_total", "Changes of other replicas applied to memory from the change feed."),
		reloads:    s.Counter("feed_reloads_total", "Full reloads of memory from the database (feed pruned past this replica's position, or memory found out of step)."),
		retries:    s.Counter("feed_write_retries_total", "Writes run again after catching up, because they failed while memory was behind another replica's write."),
		errors:     s.Counter("feed_errors_total", "Failed reads or prunes of the change feed (the next poll retries)."),
		position:   s.Gauge("feed_position", "Id up to which this replica's memory holds every change of the feed."),
		tombstones: s.Counter("feed_tombstones_total", "Holes of the feed this replica closed with an empty change, after they stayed open a second."),
		holes:      s.Gauge("feed_holes", "Ids below the last change this replica holds that no change it read holds yet (writers not committed yet, or ids never used)."),
	}
}

// Open seeds the standard names through the feed and loads the records
// and the feed position from one consistent snapshot. It returns the
// replica and the records the ledger builds its memory from; until it
// has, the replica is not used.
func Open(ctx context.Context, c Config) (*Replica, *store.Records, error) {
	own := newOwnCommits()
	be := feedBackend{Backend: c.Backend, own: own}
	var recs *store.Records
	var at store.FeedPosition
	retry := seedRetry()
	for attempt := 1; ; attempt++ {
		var err error
		if recs, at, err = c.Feed.LoadAt(ctx); err != nil {
			return nil, nil, err
		}
		n := len(recs.ResourceClasses) + len(recs.Traits)
		err = c.Seed(ctx, be, recs)
		if err == nil && n == len(recs.ResourceClasses)+len(recs.Traits) {
			break // nothing seeded: recs and the position agree
		}
		// Seeded (load again, to include our change) or lost a race with
		// another replica seeding the same names (load again, retry).
		if err != nil && (!errors.Is(err, store.ErrDuplicate) || attempt >= retry.Attempts) {
			return nil, nil, fmt.Errorf("insert standard names: %w", err)
		}
	}
	write := c.Retry
	write.Attempts = maxWriteAttempts
	r := &Replica{state: c.State, feed: c.Feed, be: be, retry: write, own: own,
		metrics: newFeedMetrics(), shared: c.Backend, reads: newFeedReads()}
	r.setPos(posFrom(at, time.Now()))
	return r, recs, nil
}

// Backend is the backend the ledger writes through: every transaction
// records its operations and appends them to the feed when it commits.
func (r *Replica) Backend() store.Backend { return r.be }

// Shared is the backend as given to the ledger, for what the replicas
// keep there besides records.
func (r *Replica) Shared() store.Backend { return r.shared }

// Register registers the change feed's metrics with reg (a private
// registry when nil).
func (r *Replica) Register(reg prometheus.Registerer) error {
	if err := r.metrics.set.Register(metrics.Private(reg)); err != nil {
		return fmt.Errorf("register change feed metrics: %w", err)
	}
	return nil
}

// confirm records that a read of the feed that began at t found memory
// complete.
func (r *Replica) confirm(t time.Time) {
	for {
		old := r.confirmed.Load()
		if t.UnixNano() <= old || r.confirmed.CompareAndSwap(old, t.UnixNano()) {
			return
		}
	}
}

// setPos replaces the feed position (caller holds the writer lock).
func (r *Replica) setPos(p *feedPos) {
	r.pos = p
	r.published()
}

// published makes the position's changes visible to Fresh and the
// metrics (caller holds the writer lock).
func (r *Replica) published() {
	r.view.Store(r.pos.view())
	r.metrics.position.Set(float64(r.pos.frontier))
	r.metrics.holes.Set(float64(len(r.pos.holes)))
}

// Write runs one try of a write (run: its transaction, commit and apply,
// through Backend) for a replica: it first applies what other replicas
// committed, so that the write validates against the database's state as
// of now; the backend's compare-and-swaps and unique keys still guard
// against what they commit meanwhile. A write that fails is re-run when
// catching up then finds changes, so the client gets the answer the
// newer state gives (a generation conflict, or success after another
// replica's unrelated claim moved a provider's generation). Caller holds
// the writer lock.
func (r *Replica) Write(ctx context.Context, run func() (store.Tx, error)) error {
	if !store.IsCaughtUp(ctx) {
		if _, err := r.catchUp(ctx); err != nil {
			return fmt.Errorf("catch up with the change feed: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		tx, err := run()
		if err == nil {
			r.noteOwn(tx.(*feedTx))
			return nil
		}
		if attempt >= r.retry.Attempts || ctx.Err() != nil {
			return err
		}
		// An abort (store.ErrRetry) with nothing new goes back to the
		// ledger, which runs the write again after a pause.
		if n, cerr := r.catchUp(ctx); cerr != nil || n == 0 {
			return err // memory was current: the answer stands
		}
		r.metrics.retries.Inc()
		// Writers of every replica meet on the same rows; without a pause
		// the same one can lose every race while the others keep writing.
		if r.retry.Wait(ctx, attempt) != nil {
			return err
		}
		if _, err := r.catchUp(ctx); err != nil {
			return fmt.Errorf("catch up with the change feed: %w", err)
		}
	}
}

// noteOwn records a committed write of this process in the feed position
// and the ledger's id index (its write path already applied it to
// memory). Changes of others with smaller ids may commit after it; they
// touch none of the rows it wrote, or its compare-and-swap or theirs would
// have failed, so applying them afterwards commutes.
func (r *Replica) noteOwn(tx *feedTx) {
	if tx.changeID == 0 {
		return
	}
	r.state.NoteLocal(tx.Ops())
	r.pos.see(tx.changeID, time.Now())
	r.published()
	r.own.remove(tx.changeID)
}

// catchUp applies every change after the cursor and returns how many it
// applied (a reload counts as one). Caller holds the writer lock.
func (r *Replica) catchUp(ctx context.Context) (applied int, err error) {
	began := time.Now()
	defer func() {
		if err == nil {
			r.confirm(began)
		}
	}()
	for {
		chs, pruned, err := r.feed.Changes(ctx, r.pos.top, r.pos.missing(), feedBatch)
		if err != nil {
			return applied, fmt.Errorf("read changes after %d: %w", r.pos.top, err)
		}
		n, err := r.absorb(ctx, chs, pruned)
		applied += n
		if err != nil || len(chs) < feedBatch {
			return applied, err
		}
	}
}

// absorb applies changes read from the feed, and reloads when they do not
// fit memory or the feed was pruned past its frontier (pruned is the mark
// read with them). It returns how many it applied, a reload counting as
// one. Caller holds the writer lock.
func (r *Replica) absorb(ctx context.Context, chs []store.Change, pruned int64) (int, error) {
	n, err := r.applyChanges(chs)
	if err == nil && pruned > r.pos.frontier {
		err = fmt.Errorf("the feed was pruned through change %d, past this replica's %d", pruned, r.pos.frontier)
	}
	if err == nil {
		return n, nil
	}
	// Pruned past the position, or memory out of step: start over.
	if rerr := r.reload(ctx); rerr != nil {
		return n, fmt.Errorf("%v; reload: %w", err, rerr)
	}
	return n + 1, nil
}

// applyChanges applies a batch of changes in id order with readers
// excluded, as one write version. An error leaves memory partly patched:
// the caller reloads.
func (r *Replica) applyChanges(chs []store.Change) (int, error) {
	if len(chs) == 0 {
		return 0, nil
	}
	return r.state.Apply(func(apply func(feed.Op) error) (int, error) {
		defer r.published()
		applied := 0
		now := time.Now()
		for _, ch := range chs {
			if !r.pos.see(ch.ID, now) || len(ch.Payload) == 0 {
				continue // held already (this process's own), or a tombstone
			}
			ops, err := feed.Decode(ch.Payload)
			if err != nil {
				return applied, fmt.Errorf("change %d: %w", ch.ID, err)
			}
			applied++
			for _, o := range ops {
				if err := apply(o); err != nil {
					return applied, fmt.Errorf("change %d: %w", ch.ID, err)
				}
			}
			r.metrics.applied.Inc()
			r.metrics.lag.Observe(time.Since(ch.Time).Seconds())
		}
		return applied, nil
	})
}

// reload replaces memory with a fresh load of the database and its feed
// position. Caller holds the writer lock, so no own write is in flight:
// every one committed is in the load.
func (r *Replica) reload(ctx context.Context) error {
	recs, at, err := r.feed.LoadAt(ctx)
	if err != nil {
		return err
	}
	if err := r.state.Replace(recs); err != nil {
		return err
	}
	r.setPos(posFrom(at, time.Now()))
	r.metrics.reloads.Inc()
	return nil
}
