package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// A ledger over a backend that implements store.Feed is one replica of
// several sharing the database (DESIGN.md, "Replicas"). Its writes append
// their operations to the change feed; before each write, and every poll
// interval, it applies the changes the others committed.

// feedBatch is how many changes one read of the feed returns at most.
const feedBatch = 500

// maxWriteAttempts bounds how often a write that failed while memory was
// behind the database is re-run after catching up.
const maxWriteAttempts = 8

// replica is a ledger's follower state; only the holder of Ledger.wmu
// uses it, but for the fields said otherwise.
type replica struct {
	feed store.Feed
	// pos is which changes memory holds.
	pos *feedPos
	// view mirrors pos for readers that do not hold wmu (Fresh).
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
	idx       *idIndex
	metrics   *feedMetrics
	// shared is the backend as given to New.
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

// openReplica seeds the standard names through the feed and loads the
// state and the feed position from one consistent snapshot.
func (l *Ledger) openReplica(ctx context.Context, f store.Feed) error {
	shared := l.be
	own := newOwnCommits()
	l.be = feedBackend{Backend: l.be, own: own}
	var recs *store.Records
	var at store.FeedPosition
	for attempt := 1; ; attempt++ {
		var err error
		if recs, at, err = f.LoadAt(ctx); err != nil {
			return err
		}
		n := len(recs.ResourceClasses) + len(recs.Traits)
		err = seedStandard(ctx, l.be, recs, l.now().UTC())
		if err == nil && n == len(recs.ResourceClasses)+len(recs.Traits) {
			break // nothing seeded: recs and the position agree
		}
		// Seeded (load again, to include our change) or lost a race with
		// another replica seeding the same names (load again, retry).
		if err != nil && (!errors.Is(err, store.ErrDuplicate) || attempt == 3) {
			return fmt.Errorf("insert standard names: %w", err)
		}
	}
	st, idx, err := buildState(recs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	l.st = st
	l.rep = &replica{feed: f, own: own, idx: idx, metrics: newFeedMetrics(), shared: shared, reads: newFeedReads()}
	l.rep.setPos(posFrom(at, time.Now()))
	return nil
}

// confirm records that a read of the feed that began at t found memory
// complete.
func (r *replica) confirm(t time.Time) {
	for {
		old := r.confirmed.Load()
		if t.UnixNano() <= old || r.confirmed.CompareAndSwap(old, t.UnixNano()) {
			return
		}
	}
}

// setPos replaces the feed position (caller holds wmu).
func (r *replica) setPos(p *feedPos) {
	r.pos = p
	r.published()
}

// published makes the position's changes visible to Fresh and the
// metrics (caller holds wmu).
func (r *replica) published() {
	r.view.Store(r.pos.view())
	r.metrics.position.Set(float64(r.pos.frontier))
	r.metrics.holes.Set(float64(len(r.pos.holes)))
}

// replicaWrite is writeTx for a replica: it first applies what other
// replicas committed, so that fn validates against the database's state
// as of now; the backend's compare-and-swaps and unique keys still guard
// against what they commit meanwhile. A write that fails is re-run when
// catching up then finds changes, so the client gets the answer the
// newer state gives (a generation conflict, or success after another
// replica's unrelated claim moved a provider's generation). Caller holds
// wmu.
func (l *Ledger) replicaWrite(ctx context.Context, usageOnly bool, fn writeFunc) error {
	if !store.IsCaughtUp(ctx) {
		if _, err := l.catchUp(ctx); err != nil {
			return fmt.Errorf("catch up with the change feed: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		tx, err := l.writeTx(ctx, usageOnly, fn)
		if err == nil {
			l.noteOwn(tx.(*feedTx))
			return nil
		}
		if attempt == maxWriteAttempts || ctx.Err() != nil {
			return err
		}
		// An abort (store.ErrRetry) with nothing new goes back to
		// writeKind, which runs the write again after a pause.
		if n, cerr := l.catchUp(ctx); cerr != nil || n == 0 {
			return err // memory was current: the answer stands
		}
		l.rep.metrics.retries.Inc()
		// Writers of every replica meet on the same rows; without a pause
		// the same one can lose every race while the others keep writing.
		if writeRetry().Wait(ctx, attempt) != nil {
			return err
		}
		if _, err := l.catchUp(ctx); err != nil {
			return fmt.Errorf("catch up with the change feed: %w", err)
		}
	}
}

// noteOwn records a committed write of this process in the feed position
// and the id index (its write path already applied it to memory). Changes
// of others with smaller ids may commit after it; they touch none of the
// rows it wrote, or its compare-and-swap or theirs would have failed, so
// applying them afterwards commutes.
func (l *Ledger) noteOwn(tx *feedTx) {
	r := l.rep
	if tx.changeID == 0 {
		return
	}
	r.idx.noteLocal(l.st, tx.Ops())
	r.pos.see(tx.changeID, time.Now())
	r.published()
	r.own.remove(tx.changeID)
}

// catchUp applies every change after the cursor and returns how many it
// applied (a reload counts as one). Caller holds wmu.
func (l *Ledger) catchUp(ctx context.Context) (applied int, err error) {
	began := time.Now()
	defer func() {
		if err == nil {
			l.rep.confirm(began)
		}
	}()
	r := l.rep
	for {
		chs, pruned, err := r.feed.Changes(ctx, r.pos.top, r.pos.missing(), feedBatch)
		if err != nil {
			return applied, fmt.Errorf("read changes after %d: %w", r.pos.top, err)
		}
		n, err := l.absorb(ctx, chs, pruned)
		applied += n
		if err != nil || len(chs) < feedBatch {
			return applied, err
		}
	}
}

// absorb applies changes read from the feed, and reloads when they do not
// fit memory or the feed was pruned past its frontier (pruned is the mark
// read with them). It returns how many it applied, a reload counting as
// one. Caller holds wmu.
func (l *Ledger) absorb(ctx context.Context, chs []store.Change, pruned int64) (int, error) {
	r := l.rep
	n, err := l.applyChanges(chs)
	if err == nil && pruned > r.pos.frontier {
		err = fmt.Errorf("the feed was pruned through change %d, past this replica's %d", pruned, r.pos.frontier)
	}
	if err == nil {
		return n, nil
	}
	// Pruned past the position, or memory out of step: start over.
	if rerr := l.reloadFeed(ctx); rerr != nil {
		return n, fmt.Errorf("%v; reload: %w", err, rerr)
	}
	return n + 1, nil
}

// applyChanges applies a batch of changes in id order under the state
// lock, as one write version. An error leaves memory partly patched: the
// caller reloads.
func (l *Ledger) applyChanges(chs []store.Change) (int, error) {
	r := l.rep
	if len(chs) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.usageLog = l.st.usageLog[:0]
	usageOnly, applied := true, 0
	defer func() {
		if applied > 0 {
			l.version++
			l.snap.noteWrite(usageOnly, l.st.usageLog)
		}
		r.published()
	}()
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
			usageOnly = usageOnly && o.UsageOnly()
			if err := r.idx.apply(l.st, o); err != nil {
				return applied, fmt.Errorf("change %d: %w", ch.ID, err)
			}
		}
		r.metrics.applied.Inc()
		r.metrics.lag.Observe(time.Since(ch.Time).Seconds())
	}
	return applied, nil
}

// reloadFeed replaces memory with a fresh load of the database and its feed
// position. Caller holds wmu, so no own write is in flight: every one
// committed is in the load.
func (l *Ledger) reloadFeed(ctx context.Context) error {
	r := l.rep
	recs, at, err := r.feed.LoadAt(ctx)
	if err != nil {
		return err
	}
	st, idx, err := buildState(recs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	l.mu.Lock()
	l.st = st
	l.version++
	l.snap.noteWrite(false, nil)
	l.mu.Unlock()
	r.idx = idx
	r.setPos(posFrom(at, time.Now()))
	r.metrics.reloads.Inc()
	return nil
}
