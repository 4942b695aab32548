package store

// AggregateStore manages provider aggregate membership.
type AggregateStore interface {
	ProviderAggregates(ctx Ctx, uuid string) (Provider, []string, error)
	// SetProviderAggregates replaces the provider's aggregates. With a
	// generation (microversion 1.19) the write is generation-checked and
	// increments it; with nil it is neither.
	SetProviderAggregates(ctx Ctx, uuid string, generation *int64, aggregates []string) (Provider, []string, error)
}
