package ledger

import (
	"context"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// feedBackend is the backend a replica writes through: every transaction
// records its operations and, when it made any, appends them to the
// change feed as its last statement before it commits.
type feedBackend struct {
	store.Backend
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
	return &feedTx{Recorder: feed.NewRecorder(tx), ctx: ctx, feed: ftx}, nil
}

// feedTx is one replica transaction.
type feedTx struct {
	*feed.Recorder
	ctx  context.Context
	feed store.FeedTx
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
		if t.changeID, err = t.feed.AppendChange(t.ctx, payload); err != nil {
			return fmt.Errorf("append to the change feed: %w", err)
		}
	}
	return t.Recorder.Commit()
}
