package store

import (
	"context"
	"errors"
	"fmt"
)

// ProviderInventories is the desired full inventory of one provider,
// guarded by its generation.
type ProviderInventories struct {
	ProviderUUID string
	Generation   int64
	Inventories  []Inventory
}

// Reshape's error kinds beyond AllocationStore's: ErrUnknownProvider for a
// provider in inventories that does not exist (the detail names it as
// "No resource provider with uuid U found"), ErrProviderGeneration for a
// provider generation mismatch, ErrNotFound also for an unknown class in
// inventories, and ErrInventoryInUse when the final inventory drops a
// class that still has allocations.
var (
	ErrUnknownProvider    = errors.New("unknown resource provider")
	ErrProviderGeneration = fmt.Errorf("resource provider generation conflict: %w", ErrConcurrentUpdate)
)

// ReshapeStore moves inventory and allocations atomically (1.30).
type ReshapeStore interface {
	// Reshape replaces the inventories of the given providers and the
	// allocations of the given consumers in one transaction, as
	// upstream's reshaper: inventories are first widened to the union of
	// old and new, then allocations are replaced (checked against that
	// interim inventory), then inventories are set to the requested
	// state. Each of the three steps increments the generation of the
	// providers it touches.
	Reshape(ctx context.Context, inventories []ProviderInventories, allocations []ConsumerAllocations) error
	// ReshapeUnder is Reshape under the given capacity rule (Reshape is
	// CapacityStrict).
	ReshapeUnder(ctx context.Context, rule CapacityRule, inventories []ProviderInventories, allocations []ConsumerAllocations) error
}
