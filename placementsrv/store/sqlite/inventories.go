package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// GetInventories returns the provider and its inventories by class name.
func (s *Store) GetInventories(ctx context.Context, uuid string) (store.Provider, []store.Inventory, error) {
	var p store.Provider
	var invs []store.Inventory
	err := s.read(func(st *state) error {
		rp, err := st.lookupProvider(uuid)
		if err != nil {
			return err
		}
		p, invs = rp.record(), rp.sortedInventories()
		return nil
	})
	return p, invs, err
}

// SetInventories replaces the provider's whole inventory.
func (s *Store) SetInventories(ctx context.Context, uuid string, generation int64, invs []store.Inventory) (store.Provider, []store.Inventory, error) {
	var p store.Provider
	var out []store.Inventory
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		rp, err := s.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		apply, err := s.replaceInventoriesTx(ctx, tx, now, rp, generation, invs)
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
func (s *Store) replaceInventoriesTx(ctx context.Context, tx *sql.Tx, now time.Time, rp *provider, generation int64, invs []store.Inventory) (func(), error) {
	if rp.generation != generation {
		return nil, concurrentProviderUpdate()
	}
	st := s.st
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
		if _, err := tx.ExecContext(ctx, `DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?`, rp.id, rc.id); err != nil {
			return nil, fmt.Errorf("delete inventory %s: %w", rc.name, err)
		}
	}
	next := make(map[*resourceClass]*inventory, len(want))
	for rc, inv := range want {
		old := rp.inventories[rc]
		ni := newInventory(rc, inv)
		if old == nil {
			ni.createdAt = now
			if err := insertInventory(ctx, tx, rp, ni); err != nil {
				return nil, err
			}
		} else {
			ni.createdAt, ni.updatedAt = old.createdAt, now
			if err := updateInventory(ctx, tx, rp, ni); err != nil {
				return nil, err
			}
		}
		next[rc] = ni
	}
	if err := bumpGeneration(ctx, tx, rp, now); err != nil {
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
	}, nil
}

// AddInventory adds one inventory of a class the provider lacks.
func (s *Store) AddInventory(ctx context.Context, uuid string, inv store.Inventory) (store.Provider, store.Inventory, error) {
	var p store.Provider
	var out store.Inventory
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		rp, err := s.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		rc, err := s.st.lookupClass(inv.ResourceClass)
		if err != nil {
			return nil, err
		}
		if _, dup := rp.inventories[rc]; dup {
			return nil, store.Errorf(store.ErrDuplicate, "UNIQUE constraint failed: inventories.resource_provider_id, inventories.resource_class_id")
		}
		ni := newInventory(rc, inv)
		ni.createdAt = now
		if err := insertInventory(ctx, tx, rp, ni); err != nil {
			return nil, err
		}
		if err := bumpGeneration(ctx, tx, rp, now); err != nil {
			return nil, err
		}
		return func() {
			rp.inventories[rc] = ni
			rc.providers[rp] = struct{}{}
			rp.generation++
			rp.updatedAt = now
			p, out = rp.record(), ni.record()
		}, nil
	})
	return p, out, err
}

// UpdateInventory replaces one existing inventory.
func (s *Store) UpdateInventory(ctx context.Context, uuid string, generation int64, inv store.Inventory) (store.Provider, store.Inventory, error) {
	var p store.Provider
	var out store.Inventory
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		rp, err := s.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		if rp.generation != generation {
			return nil, concurrentProviderUpdate()
		}
		rc, err := s.st.lookupClass(inv.ResourceClass)
		if err != nil {
			return nil, err
		}
		old, ok := rp.inventories[rc]
		if !ok {
			return nil, inventoryNotFound(rc.name)
		}
		ni := newInventory(rc, inv)
		ni.createdAt, ni.updatedAt = old.createdAt, now
		if err := updateInventory(ctx, tx, rp, ni); err != nil {
			return nil, err
		}
		if err := bumpGeneration(ctx, tx, rp, now); err != nil {
			return nil, err
		}
		return func() {
			rp.inventories[rc] = ni
			rp.generation++
			rp.updatedAt = now
			p, out = rp.record(), ni.record()
		}, nil
	})
	return p, out, err
}

// DeleteInventory removes one inventory that has no allocations.
func (s *Store) DeleteInventory(ctx context.Context, uuid, className string) error {
	return s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		rp, err := s.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		rc, err := s.st.lookupClass(className)
		if err != nil {
			return nil, err
		}
		if err := checkNotInUse(rp, []*resourceClass{rc}); err != nil {
			return nil, err
		}
		if _, ok := rp.inventories[rc]; !ok {
			return nil, store.Errorf(store.ErrInventoryNotFound, "No inventory of class "+rc.name+" found for delete")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?`, rp.id, rc.id); err != nil {
			return nil, fmt.Errorf("delete inventory %s: %w", rc.name, err)
		}
		if err := bumpGeneration(ctx, tx, rp, now); err != nil {
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
func (s *Store) DeleteAllInventories(ctx context.Context, uuid string) error {
	return s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		rp, err := s.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		return s.replaceInventoriesTx(ctx, tx, now, rp, rp.generation, nil)
	})
}

// newInventory builds the state record for inv of class rc.
func newInventory(rc *resourceClass, inv store.Inventory) *inventory {
	return &inventory{
		class:           rc,
		total:           inv.Total,
		reserved:        inv.Reserved,
		minUnit:         inv.MinUnit,
		maxUnit:         inv.MaxUnit,
		stepSize:        inv.StepSize,
		allocationRatio: inv.AllocationRatio,
	}
}

func insertInventory(ctx context.Context, tx *sql.Tx, rp *provider, i *inventory) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rp.id, i.class.id, i.total, i.reserved, i.minUnit, i.maxUnit, i.stepSize, i.allocationRatio, nanos(i.createdAt))
	if err != nil {
		return fmt.Errorf("insert inventory %s: %w", i.class.name, err)
	}
	return nil
}

func updateInventory(ctx context.Context, tx *sql.Tx, rp *provider, i *inventory) error {
	res, err := tx.ExecContext(ctx, `UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, allocation_ratio = ?, updated_at = ? WHERE resource_provider_id = ? AND resource_class_id = ?`,
		i.total, i.reserved, i.minUnit, i.maxUnit, i.stepSize, i.allocationRatio, nanos(i.updatedAt), rp.id, i.class.id)
	if err != nil {
		return fmt.Errorf("update inventory %s: %w", i.class.name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return inventoryNotFound(i.class.name)
	}
	return nil
}

// bumpGeneration increments rp's generation in SQL as a compare-and-swap
// against the generation in memory.
func bumpGeneration(ctx context.Context, tx *sql.Tx, rp *provider, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE resource_providers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		nanos(now), rp.id, rp.generation)
	if err != nil {
		return fmt.Errorf("increment generation of %s: %w", rp.uuid, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("increment generation of %s: %w", rp.uuid, err)
	}
	if n != 1 {
		return concurrentProviderUpdate()
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
	inUse := make([]*resourceClass, 0, len(used))
	for rc := range used {
		inUse = append(inUse, rc)
	}
	sort.Slice(inUse, func(i, j int) bool { return inUse[i].id < inUse[j].id })
	names := make([]string, len(inUse))
	for i, rc := range inUse {
		names[i] = rc.name
	}
	return store.Errorf(store.ErrInventoryInUse, fmt.Sprintf("Inventory for '%s' on resource provider '%s' in use.", strings.Join(names, ", "), rp.uuid))
}

func concurrentProviderUpdate() error {
	return store.Errorf(store.ErrConcurrentUpdate, "Another thread concurrently updated the resource provider data. Please retry your update")
}

func inventoryNotFound(class string) error {
	return store.Errorf(store.ErrInventoryNotFound, "No inventory of class "+class+" found.")
}
