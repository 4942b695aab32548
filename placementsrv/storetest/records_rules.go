package storetest

import (
	"errors"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// committedFixture opens the storage with the fixture committed.
func committedFixture(t *testing.T, s Storage) (*rec, store.Records) {
	t.Helper()
	r := openRecords(t, s)
	var f fixture
	r.write(func(tx store.Tx) { f = writeFixture(t, r.ctx, tx) })
	return r, f.want
}

// testUpdates checks every update and delete of a single row or link.
func testUpdates(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	root, child := w.Providers[0], w.Providers[1]
	r.write(func(tx store.Tx) {
		child.Name, child.ParentID, child.RootID, child.UpdatedAt = "renamed", 0, child.ID, at(20)
		must(t, tx.UpdateProvider(r.ctx, child))
		inv := w.Inventories[0]
		inv.Total, inv.Reserved, inv.MinUnit, inv.MaxUnit, inv.StepSize, inv.AllocationRatio, inv.UpdatedAt = 16, 2, 1, 16, 1, 2.5, at(21)
		must(t, tx.UpdateInventory(r.ctx, inv))
		w.Inventories[0] = inv
		c := w.ResourceClasses[1]
		c.Name, c.UpdatedAt = "CUSTOM_Y", at(22)
		must(t, tx.UpdateResourceClass(r.ctx, c))
		w.ResourceClasses[1] = c
		cons := w.Consumers[1]
		cons.ConsumerTypeID, cons.UpdatedAt = w.ConsumerTypes[0].ID, at(23)
		must(t, tx.UpdateConsumer(r.ctx, cons))
		w.Consumers[1] = cons
		must(t, tx.RemoveProviderTrait(r.ctx, root.ID, w.Traits[0].ID))
		must(t, tx.RemoveProviderAggregate(r.ctx, child.ID, w.Aggregates[0].ID))
		must(t, tx.DeleteTrait(r.ctx, w.Traits[0].ID))
		must(t, tx.DeleteConsumerAllocations(r.ctx, w.Consumers[1].ID))
	})
	w.Providers[1] = child
	w.ProviderTraits, w.ProviderAggregates, w.Traits = nil, nil, nil
	w.Allocations = w.Allocations[:1]
	sameRecords(t, "after updates", r.load(), w)
	if err := r.attempt(func(tx store.Tx) error {
		return tx.UpdateInventory(r.ctx, store.InventoryRow{ProviderID: child.ID, ClassID: 10000, InventoryAmounts: store.InventoryAmounts{Total: 1}, UpdatedAt: at(1)})
	}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing inventory: %v, want ErrNotFound", err)
	}
	r.write(func(tx store.Tx) {
		must(t, tx.DeleteInventory(r.ctx, root.ID, 10000))
		must(t, tx.DeleteConsumer(r.ctx, w.Consumers[0].ID))
		must(t, tx.DeleteResourceClass(r.ctx, 10000))
	})
	w.Inventories, w.Allocations = nil, nil
	w.Consumers, w.ResourceClasses = w.Consumers[1:], w.ResourceClasses[:1]
	r.reopen()
	sameRecords(t, "after deletes", r.load(), w)
}

// expect runs each op in a transaction it rolls back and reports those
// whose error is not accepted by ok.
func (r *rec) expect(want string, ok func(error) bool, ops map[string]func(tx store.Tx) error) {
	r.t.Helper()
	for name, op := range ops {
		if err := r.attempt(op); !ok(err) {
			r.t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

func isKind(kind error) func(error) bool { return func(err error) bool { return errors.Is(err, kind) } }

// testGenerationCAS checks the provider and consumer generation
// compare-and-swaps, within and across transactions.
func testGenerationCAS(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	p, c := w.Providers[0], w.Consumers[0]
	r.write(func(tx store.Tx) {
		must(t, tx.BumpProviderGeneration(r.ctx, p.ID, 3, at(30)))
		must(t, tx.BumpProviderGeneration(r.ctx, p.ID, 4, at(31)))
		must(t, tx.BumpConsumerGeneration(r.ctx, c.ID, 2, at(32)))
	})
	r.expect("ErrConcurrentUpdate", isKind(store.ErrConcurrentUpdate), map[string]func(tx store.Tx) error{
		"stale provider": func(tx store.Tx) error { return tx.BumpProviderGeneration(r.ctx, p.ID, 4, at(33)) },
		"missing provider": func(tx store.Tx) error {
			return tx.BumpProviderGeneration(r.ctx, p.ID+100, 0, at(33))
		},
		"stale consumer":   func(tx store.Tx) error { return tx.BumpConsumerGeneration(r.ctx, c.ID, 2, at(33)) },
		"missing consumer": func(tx store.Tx) error { return tx.BumpConsumerGeneration(r.ctx, c.ID+100, 0, at(33)) },
		"stale consumer update": func(tx store.Tx) error {
			u := c
			u.UpdatedAt = at(33)
			return tx.UpdateConsumer(r.ctx, u)
		},
	})
	got := r.load()
	if g := got.Providers[0]; g.Generation != 5 || !g.UpdatedAt.Equal(at(31)) {
		t.Errorf("provider after two bumps: %+v", g)
	}
	if g := got.Consumers[0]; g.Generation != 3 || !g.UpdatedAt.Equal(at(32)) {
		t.Errorf("consumer after a bump: %+v", g)
	}
}

// testUnique checks that every unique key refuses a duplicate with
// ErrDuplicate.
func testUnique(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	root, child := w.Providers[0], w.Providers[1]
	ctx := r.ctx
	r.expect("ErrDuplicate", isKind(store.ErrDuplicate), map[string]func(tx store.Tx) error{
		"provider uuid": func(tx store.Tx) error {
			_, err := tx.InsertProvider(ctx, store.ProviderRow{UUID: "root", Name: "other", CreatedAt: at(1)})
			return err
		},
		"provider name": func(tx store.Tx) error {
			_, err := tx.InsertProvider(ctx, store.ProviderRow{UUID: "other", Name: "root", CreatedAt: at(1)})
			return err
		},
		"provider rename": func(tx store.Tx) error {
			child.Name = "root"
			return tx.UpdateProvider(ctx, child)
		},
		"class id": func(tx store.Tx) error {
			return tx.InsertResourceClass(ctx, store.ResourceClassRow{ID: 10000, Name: "CUSTOM_Z", CreatedAt: at(1)})
		},
		"class name": func(tx store.Tx) error {
			return tx.InsertResourceClass(ctx, store.ResourceClassRow{ID: 10001, Name: "CUSTOM_X", CreatedAt: at(1)})
		},
		"class rename": func(tx store.Tx) error {
			return tx.UpdateResourceClass(ctx, store.ResourceClassRow{ID: 10000, Name: "VCPU", UpdatedAt: at(1)})
		},
		"trait": func(tx store.Tx) error {
			_, err := tx.InsertTrait(ctx, store.TraitRow{Name: "CUSTOM_T", CreatedAt: at(1)})
			return err
		},
		"aggregate": func(tx store.Tx) error { _, err := tx.InsertAggregate(ctx, "agg"); return err },
		"project":   func(tx store.Tx) error { _, err := tx.InsertProject(ctx, "proj"); return err },
		"user":      func(tx store.Tx) error { _, err := tx.InsertUser(ctx, "user"); return err },
		"consumer type": func(tx store.Tx) error {
			_, err := tx.InsertConsumerType(ctx, store.ConsumerTypeRow{Name: "INSTANCE", CreatedAt: at(1)})
			return err
		},
		"inventory":      func(tx store.Tx) error { return tx.InsertInventory(ctx, w.Inventories[0]) },
		"provider trait": func(tx store.Tx) error { return tx.AddProviderTrait(ctx, root.ID, w.Traits[0].ID) },
		"provider aggregate": func(tx store.Tx) error {
			return tx.AddProviderAggregate(ctx, child.ID, w.Aggregates[0].ID)
		},
		"consumer": func(tx store.Tx) error {
			c := w.Consumers[1]
			_, err := tx.InsertConsumer(ctx, c)
			return err
		},
	})
	sameRecords(t, "after refused duplicates", r.load(), w)
}

// testReferences checks that writes cannot leave a reference to a row
// that does not exist.
func testReferences(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	root, child := w.Providers[0], w.Providers[1]
	ctx := r.ctx
	r.expect("a reference error", isReferenceError, map[string]func(tx store.Tx) error{
		"inventory of a missing provider": func(tx store.Tx) error {
			return tx.InsertInventory(ctx, store.InventoryRow{ProviderID: child.ID + 100, ClassID: 0, InventoryAmounts: store.InventoryAmounts{Total: 1}, CreatedAt: at(1)})
		},
		"inventory of a missing class": func(tx store.Tx) error {
			return tx.InsertInventory(ctx, store.InventoryRow{ProviderID: child.ID, ClassID: 9999, InventoryAmounts: store.InventoryAmounts{Total: 1}, CreatedAt: at(1)})
		},
		"allocation of a missing consumer": func(tx store.Tx) error {
			_, err := tx.InsertAllocation(ctx, store.AllocationRow{ProviderID: root.ID, ConsumerID: 999, ClassID: 0, Used: 1, CreatedAt: at(1)})
			return err
		},
		"child of a missing parent": func(tx store.Tx) error {
			_, err := tx.InsertProvider(ctx, store.ProviderRow{UUID: "x", Name: "x", ParentID: child.ID + 100, RootID: child.ID + 100, CreatedAt: at(1)})
			return err
		},
		"delete a parent": func(tx store.Tx) error { return tx.DeleteProvider(ctx, root.ID) },
		"delete an allocated provider": func(tx store.Tx) error {
			must(t, tx.DeleteProvider(ctx, child.ID))
			return tx.DeleteProvider(ctx, root.ID)
		},
		"delete a class in use": func(tx store.Tx) error { return tx.DeleteResourceClass(ctx, 10000) },
		"delete a trait in use": func(tx store.Tx) error { return tx.DeleteTrait(ctx, w.Traits[0].ID) },
	})
	sameRecords(t, "after refused writes", r.load(), w)
}

// isReferenceError accepts any failure but the contract's sentinels,
// which mean something else.
func isReferenceError(err error) bool {
	return err != nil && !errors.Is(err, store.ErrDuplicate) && !errors.Is(err, store.ErrConcurrentUpdate) && !errors.Is(err, store.ErrNotFound)
}

// testCascades checks what DeleteProvider, DeleteConsumer and
// DeleteConsumerAllocations take with them, and what they leave.
func testCascades(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	root, child := w.Providers[0], w.Providers[1]
	r.write(func(tx store.Tx) {
		must(t, tx.AddProviderTrait(r.ctx, child.ID, w.Traits[0].ID))
		must(t, tx.InsertInventory(r.ctx, store.InventoryRow{ProviderID: child.ID, ClassID: 0, CreatedAt: at(40),
			InventoryAmounts: store.InventoryAmounts{Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}}))
	})
	r.write(func(tx store.Tx) {
		must(t, tx.DeleteProvider(r.ctx, child.ID))
		must(t, tx.DeleteConsumer(r.ctx, w.Consumers[0].ID))
	})
	w.Providers = w.Providers[:1]
	w.ProviderAggregates = nil
	w.Consumers, w.Allocations = w.Consumers[1:], w.Allocations[1:]
	r.reopen()
	sameRecords(t, "after deleting the child and a consumer", r.load(), w)
	r.write(func(tx store.Tx) { must(t, tx.DeleteConsumerAllocations(r.ctx, w.Consumers[0].ID)) })
	r.write(func(tx store.Tx) { must(t, tx.DeleteProvider(r.ctx, root.ID)) })
	w.Providers, w.Inventories, w.ProviderTraits, w.Allocations = nil, nil, nil, nil
	r.reopen()
	sameRecords(t, "after deleting the root", r.load(), w)
}
