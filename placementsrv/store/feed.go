package store

import (
	"context"
	"time"
)

// Feed is implemented by a Backend that several processes share (MySQL,
// MariaDB, Galera): every committed write transaction also records, as its
// last statement, one change holding the row-level operations it made
// (package store/feed encodes them), so each process can bring its
// in-memory copy up to date with the others' writes. A Backend that one
// process owns (SQLite) does not implement it and pays nothing for it.
//
// Change ids come from the database (an auto-increment key) and no lock
// is held from taking one to the commit, so writes to different rows
// never wait for each other. Ids are therefore not dense and not in
// commit order: a reader may see id 12 while 11 is still being committed,
// rolled back, or never used (Galera's interleaved auto-increments). The
// reader keeps the ids below the highest it has seen that it has not
// seen (holes), asks for them again each time, and closes a hole that
// stays empty with an empty change (a tombstone, Settle), which either
// takes the id for good or finds the writer's change there. Every id up
// to the settled mark is a change or a tombstone; pruning deletes only
// such ids, and raises the pruned mark first, so that a reader whose
// position is below it knows it may have missed changes and reloads
// (placementsrv/ledger/DESIGN.md, "The feed").
type Feed interface {
	// LoadAt is Load plus the feed position the records include, both
	// read from one consistent snapshot.
	LoadAt(ctx context.Context) (*Records, FeedPosition, error)
	// Changes returns committed changes (tombstones included) with an id
	// among missing, and up to limit with an id greater than after, in
	// ascending id order; then the pruned mark, read after them.
	Changes(ctx context.Context, after int64, missing []int64, limit int) ([]Change, int64, error)
	// Settle writes a tombstone for each id of missing that holds no
	// change and returns those ids; an id whose writer has not committed
	// yet stays open (Settle waits at most about a second for it). It
	// then raises the settled mark to through, when that is higher.
	Settle(ctx context.Context, through int64, missing []int64) ([]int64, error)
	// PruneChanges deletes settled changes committed before t and
	// returns how many it deleted.
	PruneChanges(ctx context.Context, before time.Time) (int64, error)
}

// FeedPosition is which changes a load includes.
type FeedPosition struct {
	// Settled is the settled mark: every id up to it is a change the
	// records include or a tombstone.
	Settled int64
	// Seen are the ids above Settled of the changes the records
	// include, ascending; every other id above Settled is not committed
	// yet, or never will be.
	Seen []int64
}

// FeedTx is implemented by the Tx of a Backend that implements Feed.
type FeedTx interface {
	// AppendChange records payload as this transaction's change and
	// returns its id. The ledger calls it once, last, just before Commit.
	AppendChange(ctx context.Context, payload []byte) (int64, error)
	// CommitChange is AppendChange then Commit, in one round trip where
	// the backend can: the ledger calls it instead of both for a
	// transaction that wrote something. On error the transaction did not
	// commit, or its outcome is unknown; it is over either way.
	CommitChange(ctx context.Context, payload []byte) (int64, error)
}

// Change is one committed write transaction as the feed carries it; a
// tombstone has no payload.
type Change struct {
	ID int64
	// Time is the database's clock when the change was recorded.
	Time    time.Time
	Payload []byte
}

// Leases is implemented by a shared Backend that can elect one holder of
// a named lease (the reconciler's leader): a row with a holder and an
// expiry on the database's own clock, so replicas' clocks need not agree.
type Leases interface {
	// AcquireLease makes holder the holder of lease name until ttl from
	// now, when the lease is free, expired or already holder's, and
	// reports whether holder holds it afterwards.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives up name if holder holds it.
	ReleaseLease(ctx context.Context, name, holder string) error
}

// caughtUpKey marks a context (CaughtUp).
type caughtUpKey struct{}

// CaughtUp marks ctx as following a successful catch-up with the change
// feed (the HTTP layer's, before a write request): a replica's write under
// it does not read the feed again first. A write that then fails still
// catches up and runs again, as any write that lost a race does.
func CaughtUp(ctx context.Context) context.Context {
	return context.WithValue(ctx, caughtUpKey{}, true)
}

// IsCaughtUp reports whether ctx was marked by CaughtUp.
func IsCaughtUp(ctx context.Context) bool { return ctx.Value(caughtUpKey{}) != nil }
