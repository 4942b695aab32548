package store

// UsageFilter selects consumers for total usages.
type UsageFilter struct {
	ProjectID    string
	UserID       string
	ConsumerType string // "" = all, "all", "unknown" or a type name
}

// TypeUsage is the usage of one consumer type.
type TypeUsage struct {
	ConsumerCount int64
	Usages        map[string]int64
}

// UsageStore answers usage queries.
type UsageStore interface {
	// ProviderUsages returns used amounts per resource class for every
	// class the provider has inventory of (zero when unused).
	ProviderUsages(ctx Ctx, uuid string) (Provider, map[string]int64, error)
	// TotalUsages sums usage per consumer type ("unknown" for none).
	TotalUsages(ctx Ctx, f UsageFilter) (map[string]TypeUsage, error)
}
