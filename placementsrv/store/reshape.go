package store

// ProviderInventories is the desired full inventory of one provider,
// guarded by its generation.
type ProviderInventories struct {
	ProviderUUID string
	Generation   int64
	Inventories  []Inventory
}

// ReshapeStore moves inventory and allocations atomically (1.30).
type ReshapeStore interface {
	Reshape(ctx Ctx, inventories []ProviderInventories, allocations []ConsumerAllocations) error
}
