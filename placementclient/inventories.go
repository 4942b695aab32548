package placementclient

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Inventory is one resource class's inventory record, every field set.
type Inventory struct {
	Total           int
	Reserved        int
	MinUnit         int
	MaxUnit         int
	StepSize        int
	AllocationRatio float64
}

// Placement's defaults for fields a PUT leaves out
// (placement: handlers/inventory.py INVENTORY_DEFAULTS).
const (
	DefaultMaxUnit = math.MaxInt32
)

// WithDefaults fills zero min_unit, max_unit, step_size and
// allocation_ratio with Placement's defaults. gophercloud sends every
// field, so a zero left in place would be a 400 (units) or a capacity of 0
// (ratio).
func (inv Inventory) WithDefaults() Inventory {
	if inv.MinUnit == 0 {
		inv.MinUnit = 1
	}
	if inv.MaxUnit == 0 {
		inv.MaxUnit = DefaultMaxUnit
	}
	if inv.StepSize == 0 {
		inv.StepSize = 1
	}
	if inv.AllocationRatio == 0 {
		inv.AllocationRatio = 1
	}
	return inv
}

// ratio32 is the float32 gophercloud puts on the wire; ratio64 reads one
// back at its shortest decimal form, so that 1.2 stays 1.2 rather than
// 1.2000000476837158 and desired and actual compare equal.
func ratio32(f float64) float32 { return float32(f) }

func ratio64(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

// Equal compares two records as Placement stores them (ratios at float32
// precision).
func (inv Inventory) Equal(o Inventory) bool {
	return inv.Total == o.Total && inv.Reserved == o.Reserved && inv.MinUnit == o.MinUnit &&
		inv.MaxUnit == o.MaxUnit && inv.StepSize == o.StepSize &&
		ratio32(inv.AllocationRatio) == ratio32(o.AllocationRatio)
}

func toGC(inv Inventory) resourceproviders.Inventory {
	inv = inv.WithDefaults()
	return resourceproviders.Inventory{
		Total: inv.Total, Reserved: inv.Reserved, MinUnit: inv.MinUnit, MaxUnit: inv.MaxUnit,
		StepSize: inv.StepSize, AllocationRatio: ratio32(inv.AllocationRatio),
	}
}

func fromGCInv(i resourceproviders.Inventory) Inventory {
	return Inventory{
		Total: i.Total, Reserved: i.Reserved, MinUnit: i.MinUnit, MaxUnit: i.MaxUnit,
		StepSize: i.StepSize, AllocationRatio: ratio64(i.AllocationRatio),
	}
}

// Inventories is a provider's whole inventory and its generation.
type Inventories struct {
	Generation  int
	Inventories map[string]Inventory
}

// inventoriesFromGC converts gophercloud's answer.
func inventoriesFromGC(r *resourceproviders.ResourceProviderInventories) Inventories {
	out := Inventories{Generation: r.ResourceProviderGeneration, Inventories: make(map[string]Inventory, len(r.Inventories))}
	for rc, i := range r.Inventories {
		out.Inventories[rc] = fromGCInv(i)
	}
	return out
}

// GetInventories reads a provider's inventories.
func (c *Client) GetInventories(ctx context.Context, uuid string) (Inventories, error) {
	return get(ctx, c, "get inventories of "+uuid, anyVersion, microversion.ReservedEqualTotal, uuid, resourceproviders.GetInventories, inventoriesFromGC)
}

// PutInventories replaces a provider's whole inventory, checked against
// generation, and returns the new generation. Classes left out are
// deleted (ErrInventoryInUse if they have allocations). It is sent at the
// highest microversion up to 1.26; an inventory with reserved == total
// needs 1.26 and is refused before sending on an older server.
func (c *Client) PutInventories(ctx context.Context, uuid string, generation int, invs map[string]Inventory) (int, error) {
	op := "put inventories of " + uuid
	sc, v, err := c.at(ctx, microversion.ReservedEqualTotal)
	if err != nil {
		return 0, err
	}
	body := resourceproviders.UpdateInventoriesOpts{ResourceProviderGeneration: generation, Inventories: make(map[string]resourceproviders.Inventory, len(invs))}
	for rc, inv := range invs {
		if v.Less(microversion.ReservedEqualTotal) && inv.Total > 0 && inv.Reserved >= inv.Total {
			return 0, &Error{Op: op, kind: ErrUnsupported, Detail: fmt.Sprintf("%s: reserved == total needs microversion %s, server offers %s", rc, microversion.ReservedEqualTotal, v)}
		}
		body.Inventories[rc] = toGC(inv)
	}
	r, err := resourceproviders.UpdateInventories(ctx, sc, uuid, body).Extract()
	if err != nil {
		return 0, wrapErr(op, err)
	}
	return r.ResourceProviderGeneration, nil
}

// DeleteInventory deletes one class's inventory. It carries no generation
// (LP#1746373), so the agent prefers PutInventories; this is the fallback
// for tools that need it. In use, Placement answers 409
// placement.concurrent_update (sic) for this call.
func (c *Client) DeleteInventory(ctx context.Context, uuid, class string) error {
	return send(ctx, c, "delete "+class+" inventory of "+uuid, anyVersion, microversion.ErrorCodes, uuid,
		func(ctx context.Context, sc *gophercloud.ServiceClient, uuid string) resourceproviders.DeleteResult {
			return resourceproviders.DeleteInventory(ctx, sc, uuid, class)
		})
}

// DeleteInventories deletes all of a provider's inventory (1.5).
func (c *Client) DeleteInventories(ctx context.Context, uuid string) error {
	return send(ctx, c, "delete inventories of "+uuid, microversion.DeleteAllInventories, microversion.ErrorCodes, uuid, resourceproviders.DeleteInventories)
}
