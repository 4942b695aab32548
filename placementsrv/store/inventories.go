package store

import "time"

// Inventory is one resource class's inventory on a provider.
type Inventory struct {
	ResourceClass   string
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Capacity is what may be allocated: (total - reserved) * ratio.
func (i Inventory) Capacity() int64 {
	return int64(float64(i.Total-i.Reserved) * i.AllocationRatio)
}

// InventoryStore manages inventories. Writes that take a generation
// compare it with the provider's and fail with ErrConcurrentUpdate when it
// differs; every write increments the provider generation.
type InventoryStore interface {
	// GetInventories returns the provider and its inventories sorted by
	// resource class name.
	GetInventories(ctx Ctx, uuid string) (Provider, []Inventory, error)
	// SetInventories replaces all inventories (PUT).
	SetInventories(ctx Ctx, uuid string, generation int64, invs []Inventory) (Provider, []Inventory, error)
	// AddInventory adds one inventory without a generation check (POST).
	AddInventory(ctx Ctx, uuid string, inv Inventory) (Provider, Inventory, error)
	// UpdateInventory replaces one existing inventory (PUT one).
	UpdateInventory(ctx Ctx, uuid string, generation int64, inv Inventory) (Provider, Inventory, error)
	// DeleteInventory removes one inventory without a generation check.
	DeleteInventory(ctx Ctx, uuid, resourceClass string) error
	// DeleteAllInventories removes every inventory without a generation
	// check (microversion 1.5).
	DeleteAllInventories(ctx Ctx, uuid string) error
}
