package store

import "context"

// UsageFilter selects consumers for total usages.
type UsageFilter struct {
	ProjectID string
	UserID    string // "" = any user
	// ConsumerType is "" to group by each consumer type, "all" for one
	// group of everything, "unknown" for consumers without a type, or a
	// type name.
	ConsumerType string
}

// TypeUsage is the usage of one consumer type.
type TypeUsage struct {
	// ConsumerCount counts distinct consumers with allocations.
	ConsumerCount int64
	Usages        map[string]int64
}

// UsageStore answers usage queries.
type UsageStore interface {
	// ProviderUsages returns used amounts per resource class for every
	// class the provider has inventory of (zero when unused).
	ProviderUsages(ctx context.Context, uuid string) (Provider, map[string]int64, error)
	// TotalUsages sums usage per consumer type group ("unknown" for
	// consumers without a type, "all" when the filter asks for it).
	// Groups without allocations are absent.
	TotalUsages(ctx context.Context, f UsageFilter) (map[string]TypeUsage, error)
}
