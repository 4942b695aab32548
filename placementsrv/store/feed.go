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
// Change ids are dense and in commit order: AppendChange takes the next id
// from one counter row that the transaction holds locked until it
// commits or rolls back, so a change becomes visible only after every
// change with a smaller id, and a rolled-back transaction leaves no hole.
type Feed interface {
	// LoadAt is Load plus the id of the last change the records include,
	// both read from one consistent snapshot.
	LoadAt(ctx context.Context) (*Records, int64, error)
	// Changes returns up to limit committed changes with an id greater
	// than after, in ascending id order.
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// Head returns the id of the last committed change (0 when none).
	Head(ctx context.Context) (int64, error)
	// PruneChanges deletes changes committed before t, keeping the last
	// one, and returns how many it deleted.
	PruneChanges(ctx context.Context, before time.Time) (int64, error)
}

// FeedTx is implemented by the Tx of a Backend that implements Feed.
type FeedTx interface {
	// AppendChange records payload as this transaction's change and
	// returns its id. The ledger calls it once, last, just before Commit.
	AppendChange(ctx context.Context, payload []byte) (int64, error)
}

// Change is one committed write transaction as the feed carries it.
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
