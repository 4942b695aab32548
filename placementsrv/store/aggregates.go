package store

import "context"

// AggregateStore manages provider aggregate membership. Aggregates exist
// implicitly: setting an unknown aggregate uuid on a provider creates it.
type AggregateStore interface {
	// ProviderAggregates returns the provider and its aggregate uuids in
	// the order the aggregates were first seen.
	ProviderAggregates(ctx context.Context, uuid string) (Provider, []string, error)
	// SetProviderAggregates replaces the provider's aggregates. With a
	// generation (microversion 1.19) the write fails with
	// ErrConcurrentUpdate unless it is the provider's, and then always
	// increments it; with nil it is neither checked nor incremented. It
	// returns the provider and its aggregates afterwards.
	SetProviderAggregates(ctx context.Context, uuid string, generation *int64, aggregates []string) (Provider, []string, error)
}
