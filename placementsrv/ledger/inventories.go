package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// GetInventories returns the provider and its inventories by class name.
func (l *Ledger) GetInventories(ctx context.Context, uuid string) (store.Provider, []store.Inventory, error) {
	return readProvider(l, uuid, (*provider).sortedInventories)
}

// SetInventories replaces the provider's whole inventory.
func (l *Ledger) SetInventories(ctx context.Context, uuid string, generation int64, invs []store.Inventory) (store.Provider, []store.Inventory, error) {
	var p store.Provider
	var out []store.Inventory
	err := l.writeUsage(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		rp, err := l.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		apply, err := l.replaceInventoriesTx(ctx, tx, now, rp, generation, invs)
		if err != nil {
			return nil, err
		}
		return func() {
			apply()
			p, out = rp.record(), rp.sortedInventories()
		}, nil
	})
	return p, out, err
}

// replaceInventoriesTx checks and writes a full inventory replacement for
// rp, guarded by generation, and returns the state change. It is shared
// with the reshaper, which replaces several providers' inventories in one
// transaction.
func (l *Ledger) replaceInventoriesTx(ctx context.Context, tx store.Tx, now time.Time, rp *provider, generation int64, invs []store.Inventory) (func(), error) {
	if rp.generation != generation {
		return nil, concurrentProviderUpdate()
	}
	st := l.st
	want := make(map[*resourceClass]store.Inventory, len(invs))
	for _, inv := range invs {
		rc, err := st.lookupClass(inv.ResourceClass)
		if err != nil {
			return nil, err
		}
		want[rc] = inv
	}
	var removed []*resourceClass
	for rc := range rp.inventories {
		if _, keep := want[rc]; !keep {
			removed = append(removed, rc)
		}
	}
	if err := checkNotInUse(rp, removed); err != nil {
		return nil, err
	}
	for _, rc := range removed {
		if err := tx.DeleteInventory(ctx, rp.id, rc.id); err != nil {
			return nil, fmt.Errorf("delete inventory %s: %w", rc.name, err)
		}
	}
	next := make(map[*resourceClass]*inventory, len(want))
	for rc, inv := range want {
		ni := newInventory(rc, inv)
		if err := writeInventory(ctx, tx, now, rp, rp.inventories[rc], ni); err != nil {
			return nil, err
		}
		next[rc] = ni
	}
	if err := bumpGeneration(ctx, tx, rp, rp.generation, now); err != nil {
		return nil, err
	}
	return func() {
		for _, rc := range removed {
			delete(rc.providers, rp)
		}
		for rc := range next {
			rc.providers[rp] = struct{}{}
		}
		rp.inventories = next
		rp.generation++
		rp.updatedAt = now
		st.usageLog = append(st.usageLog, rp)
	}, nil
}

// AddInventory adds one inventory of a class the provider lacks.
func (l *Ledger) AddInventory(ctx context.Context, uuid string, inv store.Inventory) (store.Provider, store.Inventory, error) {
	return l.putInventory(ctx, uuid, nil, inv)
}

// UpdateInventory replaces one existing inventory.
func (l *Ledger) UpdateInventory(ctx context.Context, uuid string, generation int64, inv store.Inventory) (store.Provider, store.Inventory, error) {
	return l.putInventory(ctx, uuid, &generation, inv)
}

// putInventory writes one inventory. Without a generation it adds one of
// a class the provider lacks; with one it checks the generation and
// replaces an existing inventory.
func (l *Ledger) putInventory(ctx context.Context, uuid string, generation *int64, inv store.Inventory) (store.Provider, store.Inventory, error) {
	var p store.Provider
	var out store.Inventory
	err := l.writeUsage(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		rp, err := l.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		if generation != nil && rp.generation != *generation {
			return nil, concurrentProviderUpdate()
		}
		rc, err := l.st.lookupClass(inv.ResourceClass)
		if err != nil {
			return nil, err
		}
		old, exists := rp.inventories[rc]
		switch {
		case generation == nil && exists:
			return nil, store.Errorf(store.ErrDuplicate, "UNIQUE constraint failed: inventories.resource_provider_id, inventories.resource_class_id")
		case generation != nil && !exists:
			return nil, inventoryNotFound(rc.name)
		}
		ni := newInventory(rc, inv)
		if err := writeInventory(ctx, tx, now, rp, old, ni); err != nil {
			return nil, err
		}
		if err := bumpGeneration(ctx, tx, rp, rp.generation, now); err != nil {
			return nil, err
		}
		return func() {
			rp.inventories[rc] = ni
			rc.providers[rp] = struct{}{}
			rp.generation++
			rp.updatedAt = now
			l.st.usageLog = append(l.st.usageLog, rp)
			p, out = rp.record(), ni.record()
		}, nil
	})
	return p, out, err
}

// DeleteInventory removes one inventory that has no allocations.
func (l *Ledger) DeleteInventory(ctx context.Context, uuid, className string) error {
	return l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		rp, err := l.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		rc, err := l.st.lookupClass(className)
		if err != nil {
			return nil, err
		}
		if err := checkNotInUse(rp, []*resourceClass{rc}); err != nil {
			return nil, err
		}
		if _, ok := rp.inventories[rc]; !ok {
			return nil, store.Errorf(store.ErrInventoryNotFound, "No inventory of class "+rc.name+" found for delete")
		}
		if err := tx.DeleteInventory(ctx, rp.id, rc.id); err != nil {
			return nil, fmt.Errorf("delete inventory %s: %w", rc.name, err)
		}
		if err := bumpGeneration(ctx, tx, rp, rp.generation, now); err != nil {
			return nil, err
		}
		return func() {
			delete(rp.inventories, rc)
			delete(rc.providers, rp)
			rp.generation++
			rp.updatedAt = now
		}, nil
	})
}

// DeleteAllInventories removes every inventory of the provider.
func (l *Ledger) DeleteAllInventories(ctx context.Context, uuid string) error {
	return l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		rp, err := l.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		return l.replaceInventoriesTx(ctx, tx, now, rp, rp.generation, nil)
	})
}

// newInventory builds the state record for inv of class rc.
func newInventory(rc *resourceClass, inv store.Inventory) *inventory {
	return &inventory{class: rc, InventoryAmounts: inv.InventoryAmounts}
}

// writeInventory stores ni as rp's inventory of its class: inserted when
// rp has none (old is nil), else updated, keeping old's creation time. An
// inventory whose amounts did not change keeps its row and times: no
// answer shows them, and a compute host reporting what it reported
// before then costs the database only the generation's bump.
func writeInventory(ctx context.Context, tx store.Tx, now time.Time, rp *provider, old, ni *inventory) error {
	if old == nil {
		ni.createdAt = now
		return insertInventory(ctx, tx, rp, ni)
	}
	if old.InventoryAmounts == ni.InventoryAmounts {
		ni.createdAt, ni.updatedAt = old.createdAt, old.updatedAt
		return nil
	}
	ni.createdAt, ni.updatedAt = old.createdAt, now
	return updateInventory(ctx, tx, rp, ni)
}

func insertInventory(ctx context.Context, tx store.Tx, rp *provider, i *inventory) error {
	if err := tx.InsertInventory(ctx, i.row(rp.id)); err != nil {
		return fmt.Errorf("insert inventory %s: %w", i.class.name, err)
	}
	return nil
}

func updateInventory(ctx context.Context, tx store.Tx, rp *provider, i *inventory) error {
	err := tx.UpdateInventory(ctx, i.row(rp.id))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return inventoryNotFound(i.class.name)
	case err != nil:
		return fmt.Errorf("update inventory %s: %w", i.class.name, err)
	}
	return nil
}

// checkNotInUse fails with ErrInventoryInUse when any of classes has
// allocations on rp, naming them in id order as Placement does.
func checkNotInUse(rp *provider, classes []*resourceClass) error {
	if len(classes) == 0 {
		return nil
	}
	asked := make(map[*resourceClass]bool, len(classes))
	for _, rc := range classes {
		asked[rc] = true
	}
	used := map[*resourceClass]bool{}
	for a := range rp.allocs {
		if asked[a.class] {
			used[a.class] = true
		}
	}
	if len(used) == 0 {
		return nil
	}
	names := classNamesByID(used)
	return store.Errorf(store.ErrInventoryInUse, fmt.Sprintf("Inventory for '%s' on resource provider '%s' in use.", strings.Join(names, ", "), rp.uuid))
}

func inventoryNotFound(class string) error {
	return store.Errorf(store.ErrInventoryNotFound, "No inventory of class "+class+" found.")
}
