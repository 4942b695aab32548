package replica

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// FollowOptions configures Follow.
type FollowOptions struct {
	// Interval is the time between two reads of the change feed; the lag
	// of this replica's reads behind another's writes is about this plus
	// one read and apply. Zero means DefaultPollInterval.
	Interval time.Duration
	// Retention is how long changes stay in the feed before any replica
	// prunes them; a replica further behind reloads everything. Zero
	// means DefaultRetention.
	Retention time.Duration
	// OnError, when set, hears failed reads and prunes (the next poll
	// retries).
	OnError func(error)
}

// Defaults of FollowOptions.
const (
	DefaultPollInterval = 100 * time.Millisecond
	DefaultRetention    = time.Hour
	// pruneEvery is how often a replica prunes the feed.
	pruneEvery = time.Minute
	// holeGrace is how long a hole stays open before a tombstone is
	// tried: a writer commits within milliseconds of taking its id, so
	// older holes are mostly ids never used (a rollback, Galera's
	// auto-increment offsets), and a tombstone ends asking for them.
	holeGrace = time.Second
	// settleEvery is the most often a replica raises the settled mark.
	settleEvery = time.Second
)

// Follow applies the other replicas' changes every interval and prunes
// the feed, until ctx ends. Writes catch up by themselves; Follow bounds
// the lag of reads.
func (r *Replica) Follow(ctx context.Context, opts FollowOptions) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultPollInterval
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	poll := time.NewTicker(opts.Interval)
	defer poll.Stop()
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			r.report(opts, r.Poll(ctx, opts.Interval*10+time.Second))
			r.report(opts, r.settle(ctx))
		case <-prune.C:
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			_, err := r.feed.PruneChanges(pctx, time.Now().Add(-opts.Retention))
			cancel()
			r.report(opts, err)
		}
	}
}

func (r *Replica) report(opts FollowOptions, err error) {
	if err == nil {
		return
	}
	r.metrics.errors.Inc()
	if opts.OnError != nil {
		opts.OnError(err)
	}
}

// Poll applies, once, every change the other replicas committed, waiting
// at most timeout. Like Fresh, it shares reads of the feed with the
// replica's other callers, reads without the writer lock and takes it
// only to apply what it found.
func (r *Replica) Poll(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return r.sync(ctx)
}

// SetConsistentReads makes Fresh bring memory up to the database's last
// change before a read (database.change_feed.consistent_reads).
func (r *Replica) SetConsistentReads(on bool) { r.consistentReads.Store(on) }

// Fresh, with consistent reads, reads the changes committed
// after the last one memory holds or in its holes and, when there are
// any, applies them, so that a read that follows it sees every write
// acknowledged before it began, on any replica: such a write committed
// before the read of the feed. This replica's own commits not applied
// yet are left to their writers (none is acknowledged). Memory already
// current costs one indexed read and no lock. An error means the read
// cannot be confirmed. Otherwise Fresh does nothing.
func (r *Replica) Fresh(ctx context.Context) error {
	if !r.consistentReads.Load() {
		return nil
	}
	return r.sync(ctx)
}

// sync applies the changes of a read of the feed that began after it was
// called, sharing the read with the replica's other callers (feedReads).
func (r *Replica) sync(ctx context.Context) error {
	return r.reads.do(ctx, r.syncOnce)
}

// syncOnce reads the changes after memory's position, giving the read at
// most freshTimeout, and returns how to apply them under the writer lock
// (nil when memory holds them all). The read holds no lock, so it does
// not wait for this replica's writer nor makes the writer wait for a
// round trip; this replica's own commits in the read are left to their
// writers.
func (r *Replica) syncOnce(ctx context.Context) (func() error, error) {
	began := time.Now()
	own := r.own.list()
	v := r.view.Load()
	hctx, cancel := context.WithTimeout(ctx, freshTimeout)
	chs, pruned, err := r.feed.Changes(hctx, v.top, v.missing, feedBatch)
	cancel()
	if err != nil {
		return nil, err
	}
	chs = slices.DeleteFunc(chs, func(c store.Change) bool { return slices.Contains(own, c.ID) })
	if len(chs) == 0 && pruned <= v.frontier {
		r.confirm(began)
		return nil, nil
	}
	return func() error {
		r.state.Lock()
		defer r.state.Unlock()
		ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
		defer cancel()
		if len(chs) == feedBatch {
			_, err := r.catchUp(ctx) // more than one read's worth
			return err
		}
		// What was read is all there was: apply it, skipping what others
		// applied meanwhile, without reading again under the lock.
		if _, err := r.absorb(ctx, chs, pruned); err != nil {
			return err
		}
		r.confirm(began)
		return nil
	}, nil
}

// LastConfirmed is when the last read of the feed that found this
// replica's memory holding every committed change began: a read answered
// from memory now misses at most what was acknowledged since. It is the
// zero time for a replica that has not confirmed yet.
func (r *Replica) LastConfirmed() time.Time {
	if r.confirmed.Load() == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.confirmed.Load())
}

// freshTimeout bounds a read's look at the feed's head: a database that
// does not answer by then leaves the read to answer from memory.
// catchUpTimeout bounds its catching up.
const (
	freshTimeout   = time.Second
	catchUpTimeout = 5 * time.Second
)

// settle tries tombstones for the holes older than holeGrace and, at most
// every settleEvery, raises the settled mark to this replica's frontier.
// The tombstones are written without the writer lock: one may wait a second for a
// writer that has not committed (paused, or slow), and writes of this
// replica must not wait with it. A closed id can never become a change,
// so it is removed from the holes afterwards without reading it.
func (r *Replica) settle(ctx context.Context) error {
	r.state.Lock()
	now := time.Now()
	stale := r.pos.stale(now.Add(-holeGrace))
	through := r.pos.frontier
	due := now.Sub(r.settledAt) >= settleEvery
	r.state.Unlock()
	if len(stale) == 0 && !due {
		return nil
	}
	closed, err := r.feed.Settle(ctx, through, stale)
	r.state.Lock()
	defer r.state.Unlock()
	if due && err == nil {
		r.settledAt = now
	}
	for _, id := range closed {
		r.pos.see(id, now)
	}
	if len(closed) > 0 {
		r.published()
		r.metrics.tombstones.Add(float64(len(closed)))
	}
	if err != nil {
		return fmt.Errorf("settle the change feed: %w", err)
	}
	return nil
}
