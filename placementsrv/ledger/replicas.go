package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger/replica"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// A ledger over a backend that implements store.Feed is one replica of
// several sharing the database (DESIGN.md, "Replicas"). Replication lives
// in package replica; this file opens it and gives it the narrow access
// to memory it needs (replicaState): the writer lock, applying another
// replica's recorded operations, a reload, and this process's own
// operations for the id index.

// FollowOptions configures Follow.
type FollowOptions = replica.FollowOptions

// Defaults of FollowOptions.
const (
	DefaultPollInterval = replica.DefaultPollInterval
	DefaultRetention    = replica.DefaultRetention
)

// openReplica seeds the standard names through the feed and loads the
// state and the feed position from one consistent snapshot.
func (l *Ledger) openReplica(ctx context.Context, f store.Feed) error {
	rep, recs, err := replica.Open(ctx, replica.Config{
		Feed: f, Backend: l.be, State: replicaState{l}, Retry: writeRetry(),
		Seed: func(ctx context.Context, be store.Backend, recs *store.Records) error {
			return seedStandard(ctx, be, recs, l.now().UTC())
		},
	})
	if err != nil {
		return err
	}
	st, idx, err := buildState(recs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	l.st, l.idx, l.rep, l.be = st, idx, rep, rep.Backend()
	return nil
}

// replicaState is the ledger's memory as its replica drives it.
type replicaState struct{ l *Ledger }

func (s replicaState) Lock()   { s.l.wmu.Lock() }
func (s replicaState) Unlock() { s.l.wmu.Unlock() }

// Apply runs batch under mu as one write version: idIndex.apply patches
// the state row by row as the writer's own apply did, and the read model
// is patched when every operation was usage-only, rebuilt otherwise.
func (s replicaState) Apply(batch func(apply func(feed.Op) error) (int, error)) (int, error) {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.usageLog = l.st.usageLog[:0]
	usageOnly := true
	applied, err := batch(func(o feed.Op) error {
		usageOnly = usageOnly && o.UsageOnly()
		return l.idx.apply(l.st, o)
	})
	if applied > 0 {
		l.version++
		l.snap.noteWrite(usageOnly, l.st.usageLog)
	}
	return applied, err
}

// Replace swaps the state and the id index for those of a fresh load.
func (s replicaState) Replace(recs *store.Records) error {
	l := s.l
	st, idx, err := buildState(recs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	l.install(st)
	l.idx = idx
	return nil
}

// NoteLocal keeps the id index in step with a write of this process.
func (s replicaState) NoteLocal(ops []feed.Op) { s.l.idx.noteLocal(s.l.st, ops) }

// replicaWrite is writeTx for a replica (replica.Write). Caller holds
// wmu.
func (l *Ledger) replicaWrite(ctx context.Context, usageOnly bool, fn writeFunc) error {
	return l.rep.Write(ctx, func() (store.Tx, error) { return l.writeTx(ctx, usageOnly, fn) })
}

// Replicated reports whether the ledger shares its database with other
// replicas through a change feed.
func (l *Ledger) Replicated() bool { return l.rep != nil }

// Follow applies the other replicas' changes every interval and prunes
// the feed, until ctx ends (replica.Replica.Follow). A ledger that is not
// replicated returns at once.
func (l *Ledger) Follow(ctx context.Context, opts FollowOptions) {
	if l.rep != nil {
		l.rep.Follow(ctx, opts)
	}
}

// Poll applies, once, every change the other replicas committed, waiting
// at most timeout (replica.Replica.Poll). It returns nil at once for a
// ledger that is not replicated.
func (l *Ledger) Poll(ctx context.Context, timeout time.Duration) error {
	if l.rep == nil {
		return nil
	}
	return l.rep.Poll(ctx, timeout)
}

// Shared returns the backend when it is shared with other replicas, for
// what they keep there besides records (the reconciler's lease and
// heartbeats); nil otherwise.
func (l *Ledger) Shared() store.Backend {
	if l.rep == nil {
		return nil
	}
	return l.rep.Shared()
}

// SetConsistentReads makes Fresh bring memory up to the database's last
// change before a read (database.change_feed.consistent_reads).
func (l *Ledger) SetConsistentReads(on bool) {
	if l.rep != nil {
		l.rep.SetConsistentReads(on)
	}
}

// Fresh, for a replica with consistent reads, brings memory up to every
// write acknowledged before it began, on any replica
// (replica.Replica.Fresh). Otherwise it does nothing.
func (l *Ledger) Fresh(ctx context.Context) error {
	if l.rep == nil {
		return nil
	}
	return l.rep.Fresh(ctx)
}

// LastConfirmed is when the last read of the feed that found this
// replica's memory holding every committed change began
// (replica.Replica.LastConfirmed). It is the zero time for a ledger that
// is not replicated or has not confirmed yet.
func (l *Ledger) LastConfirmed() time.Time {
	if l.rep == nil {
		return time.Time{}
	}
	return l.rep.LastConfirmed()
}
