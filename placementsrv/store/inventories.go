package store

import (
	"context"
	"fmt"
	"time"
)

// Inventory is one resource class's inventory on a provider.
type Inventory struct {
	ResourceClass string
	InventoryAmounts
	CreatedAt time.Time
	UpdatedAt time.Time
}

// InventoryAmounts are an inventory's amounts and allocation rules, the
// part the record (Inventory) and the backend's row (InventoryRow) share.
type InventoryAmounts struct {
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64
}

// Inventory field defaults, as Placement applies them to omitted fields.
const (
	DefaultReserved        = 0
	DefaultMinUnit         = 1
	DefaultMaxUnit         = 2147483647
	DefaultStepSize        = 1
	DefaultAllocationRatio = 1.0
)

// Capacity is what may be allocated: (total - reserved) * ratio, truncated
// toward zero as Python's int() does.
func (i InventoryAmounts) Capacity() int64 {
	return int64(float64(i.Total-i.Reserved) * i.AllocationRatio)
}

// ErrInventoryNotFound is the kind for a resource class the provider has
// no inventory of; it is also an ErrNotFound.
var ErrInventoryNotFound = fmt.Errorf("inventory %w", ErrNotFound)

// InventoryStore manages inventories. Writes that take a generation
// compare it with the provider's and fail with ErrConcurrentUpdate when it
// differs; every write increments the provider generation. An unknown
// resource class is ErrResourceClassNotFound.
type InventoryStore interface {
	// GetInventories returns the provider and its inventories sorted by
	// resource class name.
	GetInventories(ctx context.Context, uuid string) (Provider, []Inventory, error)
	// SetInventories replaces all inventories (PUT). Removing a class
	// that has allocations is ErrInventoryInUse.
	SetInventories(ctx context.Context, uuid string, generation int64, invs []Inventory) (Provider, []Inventory, error)
	// AddInventory adds one inventory without a generation check (POST);
	// an existing inventory of the class is ErrDuplicate.
	AddInventory(ctx context.Context, uuid string, inv Inventory) (Provider, Inventory, error)
	// UpdateInventory replaces one existing inventory (PUT one); a class
	// the provider has no inventory of is ErrInventoryNotFound.
	UpdateInventory(ctx context.Context, uuid string, generation int64, inv Inventory) (Provider, Inventory, error)
	// DeleteInventory removes one inventory without a generation check;
	// ErrInventoryInUse when allocated, ErrInventoryNotFound when absent.
	DeleteInventory(ctx context.Context, uuid, resourceClass string) error
	// DeleteAllInventories removes every inventory without a generation
	// check (microversion 1.5); it increments the generation even when
	// there was nothing to remove.
	DeleteAllInventories(ctx context.Context, uuid string) error
}
