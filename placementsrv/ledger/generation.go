package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// bumpGeneration increments p's generation in the backend as a
// compare-and-swap: only if it still equals expected (what the writer
// validated against). With one writer the swap cannot be lost unless
// memory and storage disagree; it keeps the write correct for a backend
// with several writers. The caller's apply updates memory.
func bumpGeneration(ctx context.Context, tx store.Tx, p *provider, expected int64, now time.Time) error {
	return casError(tx.BumpProviderGeneration(ctx, p.id, expected, now), concurrentProviderUpdate, "provider", p.uuid)
}

// bumpConsumerGeneration is bumpGeneration for a consumer.
func bumpConsumerGeneration(ctx context.Context, tx store.Tx, c *consumer, expected int64, now time.Time) error {
	return casError(tx.BumpConsumerGeneration(ctx, c.id, expected, now), concurrentConsumerUpdate, "consumer", c.uuid)
}

// casError turns a lost compare-and-swap into Placement's conflict and
// adds context to any other failure.
func casError(err error, conflict func() error, kind, uuid string) error {
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return conflict()
	case err != nil:
		return fmt.Errorf("increment generation of %s %s: %w", kind, uuid, err)
	}
	return nil
}

func concurrentProviderUpdate() error {
	return store.Errorf(store.ErrConcurrentUpdate, "Another thread concurrently updated the resource provider data. Please retry your update")
}

func concurrentConsumerUpdate() error {
	return store.Errorf(store.ErrConcurrentUpdate, "Another thread concurrently updated the data. Please retry your update")
}
