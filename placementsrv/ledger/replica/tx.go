package replica

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// feedBackend is the backend a replica writes through: every transaction
// records its operations and, when it made any, appends them to the
// change feed as its last statement before it commits.
type feedBackend struct {
	store.Backend
	own *ownCommits
}

func (b feedBackend) Begin(ctx context.Context) (store.Tx, error) {
	tx, err := b.Backend.Begin(ctx)
	if err != nil {
		return nil, err
	}
	ftx, ok := tx.(store.FeedTx)
	if !ok {
		tx.Rollback() //nolint:errcheck // refused before any write
		return nil, fmt.Errorf("backend %T has a change feed but its transaction %T cannot append to it", b.Backend, tx)
	}
	return &feedTx{Recorder: feed.NewRecorder(tx), ctx: ctx, feed: ftx, own: b.own}, nil
}

// feedTx is one replica transaction.
type feedTx struct {
	*feed.Recorder
	ctx  context.Context
	feed store.FeedTx
	own  *ownCommits
	// changeID is the id of the change appended, 0 when the transaction
	// wrote nothing.
	changeID int64
}

func (t *feedTx) Commit() error {
	if ops := t.Ops(); len(ops) > 0 {
		payload, err := feed.Encode(ops)
		if err != nil {
			return err
		}
		// The id is known once committed: a read of the feed in between
		// may meet it as another's change, and waits for the writer lock
		// to find it applied.
		if t.changeID, err = t.feed.CommitChange(t.ctx, payload); err != nil {
			return fmt.Errorf("commit with the change feed: %w", err)
		}
		t.own.add(t.changeID)
		return nil
	}
	return t.Recorder.Commit()
}

// ownCommits are the change ids of this replica's writes between taking
// an id and applying the write to memory. Fresh does not wait for them:
// none is acknowledged yet, so a read may or may not include it, as any
// read concurrent with a write. Without this, every read that met a
// commit of its own replica in the feed would queue behind the writers
// for a catch-up that finds nothing.
type ownCommits struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

func newOwnCommits() *ownCommits { return &ownCommits{ids: map[int64]struct{}{}} }

func (o *ownCommits) add(id int64) {
	o.mu.Lock()
	o.ids[id] = struct{}{}
	o.mu.Unlock()
}

func (o *ownCommits) remove(id int64) {
	o.mu.Lock()
	delete(o.ids, id)
	o.mu.Unlock()
}

// list returns the ids, ascending.
func (o *ownCommits) list() []int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.ids) == 0 {
		return nil
	}
	out := make([]int64, 0, len(o.ids))
	for id := range o.ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
