package ledger

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// reshapeTarget is one provider's requested inventory in a reshape.
type reshapeTarget struct {
	p       *provider
	want    []store.Inventory
	classes []*resourceClass // resolved classes of want, same order
	// interim is the union of the current inventory and want, which the
	// allocations are checked against; nil when want is empty.
	interim map[*resourceClass]*inventory
}

// Reshape replaces inventories and allocations in one transaction, in
// upstream's order of checks: provider existence and generation per
// inventory entry, consumer generations, allocation providers, interim
// inventory classes, allocation classes and capacity, then inventory
// still in use.
func (l *Ledger) Reshape(ctx context.Context, inventories []store.ProviderInventories, allocations []store.ConsumerAllocations) error {
	return l.ReshapeUnder(ctx, store.CapacityStrict, inventories, allocations)
}

// ReshapeUnder is Reshape with the allocations checked under rule.
func (l *Ledger) ReshapeUnder(ctx context.Context, rule store.CapacityRule, inventories []store.ProviderInventories, allocations []store.ConsumerAllocations) error {
	// answer is a failure that still commits (an unknown provider).
	var answer error
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		answer = nil
		targets, plan, err := checkReshape(l.st, inventories, allocations, rule)
		if err != nil {
			return unknownProviderAnswer(ctx, tx, now, plan, err, &answer)
		}
		return writeReshape(ctx, tx, now, targets, plan)
	})
	if err != nil {
		return err
	}
	return answer
}

// checkReshape validates a reshape against st and returns the providers'
// targets and the checked allocation plan.
func checkReshape(st *state, inventories []store.ProviderInventories, allocations []store.ConsumerAllocations, rule store.CapacityRule) ([]*reshapeTarget, *allocPlan, error) {
	targets, err := reshapeTargets(st, inventories)
	if err != nil {
		return nil, nil, err
	}
	plan, err := newAllocPlan(st, allocations, rule)
	if err != nil {
		return nil, plan, err
	}
	for _, t := range targets {
		if err := t.resolve(st); err != nil {
			return nil, nil, err
		}
	}
	interim := map[*provider]map[*resourceClass]*inventory{}
	for _, t := range targets {
		if t.interim != nil {
			interim[t.p] = t.interim
		}
	}
	invOf := func(p *provider) map[*resourceClass]*inventory {
		if m, ok := interim[p]; ok {
			return m
		}
		return p.inventories
	}
	if err := plan.check(invOf); err != nil {
		return nil, nil, err
	}
	for _, t := range targets {
		if err := t.checkInUse(plan, invOf(t.p)); err != nil {
			return nil, nil, err
		}
	}
	return targets, plan, nil
}

// writeReshape writes a checked reshape in upstream's three steps, each
// incrementing the generations of the providers it touches: the interim
// inventories, the allocations, the final inventories.
func writeReshape(ctx context.Context, tx store.Tx, now time.Time, targets []*reshapeTarget, plan *allocPlan) (func(), error) {
	gens := newGenerations()
	for _, t := range targets {
		if t.interim != nil {
			if err := gens.bump(ctx, tx, t.p, now); err != nil {
				return nil, err
			}
		}
	}
	applyAllocs, err := plan.exec(ctx, tx, now, gens)
	if err != nil {
		return nil, err
	}
	applies := make([]func(), 0, len(targets))
	for _, t := range targets {
		apply, err := t.write(ctx, tx, now)
		if err != nil {
			return nil, err
		}
		applies = append(applies, apply)
		if err := gens.bump(ctx, tx, t.p, now); err != nil {
			return nil, err
		}
	}
	return func() {
		applyAllocs()
		for _, apply := range applies {
			apply()
		}
		gens.apply(now)
	}, nil
}

// reshapeTargets looks up each provider and compares its generation, in
// request order.
func reshapeTargets(st *state, inventories []store.ProviderInventories) ([]*reshapeTarget, error) {
	targets := make([]*reshapeTarget, 0, len(inventories))
	seen := map[*provider]bool{}
	for _, pi := range inventories {
		p, ok := st.providers[pi.ProviderUUID]
		if !ok {
			return nil, store.Errorf(store.ErrUnknownProvider, "No resource provider with uuid "+pi.ProviderUUID+" found")
		}
		if p.generation != pi.Generation {
			return nil, store.Errorf(store.ErrProviderGeneration, fmt.Sprintf(
				"resource provider generation conflict for provider %s: actual: %d, given: %d", p.uuid, p.generation, pi.Generation))
		}
		if seen[p] {
			return nil, store.Errorf(store.ErrInvalid, "Resource provider "+p.uuid+" appears more than once.")
		}
		seen[p] = true
		targets = append(targets, &reshapeTarget{p: p, want: pi.Inventories})
	}
	return targets, nil
}

// resolve looks up the requested classes and builds the interim union
// inventory.
func (t *reshapeTarget) resolve(st *state) error {
	if len(t.want) == 0 {
		return nil
	}
	t.interim = make(map[*resourceClass]*inventory, len(t.p.inventories)+len(t.want))
	for c, inv := range t.p.inventories {
		t.interim[c] = inv
	}
	t.classes = make([]*resourceClass, len(t.want))
	for i, w := range t.want {
		c, ok := st.classes[w.ResourceClass]
		if !ok {
			return store.Errorf(store.ErrNotFound, "No such resource class "+w.ResourceClass+".")
		}
		t.classes[i] = c
		t.interim[c] = newInventory(c, w)
	}
	return nil
}

// checkInUse fails when the final inventory drops a class that still has
// allocations once the plan is applied; before is the inventory at that
// point (the interim one).
func (t *reshapeTarget) checkInUse(plan *allocPlan, before map[*resourceClass]*inventory) error {
	keep := map[*resourceClass]bool{}
	for _, c := range t.classes {
		keep[c] = true
	}
	var inUse []*resourceClass
	for c := range before {
		if !keep[c] && plan.usageAfter(t.p, c) > 0 {
			inUse = append(inUse, c)
		}
	}
	if len(inUse) == 0 {
		return nil
	}
	sort.Slice(inUse, func(i, j int) bool { return inUse[i].id < inUse[j].id })
	names := make([]string, len(inUse))
	for i, c := range inUse {
		names[i] = c.name
	}
	return store.Errorf(store.ErrInventoryInUse, "Inventory for '"+strings.Join(names, ", ")+"' on resource provider '"+t.p.uuid+"' in use.")
}

// write sets the provider's inventory rows to the requested state and
// returns the matching state change.
func (t *reshapeTarget) write(ctx context.Context, tx store.Tx, now time.Time) (func(), error) {
	p := t.p
	final := make(map[*resourceClass]*inventory, len(t.want))
	for i, w := range t.want {
		c := t.classes[i]
		inv := newInventory(c, w)
		inv.createdAt, inv.updatedAt = now, now
		if old, ok := p.inventories[c]; ok {
			inv.createdAt = old.createdAt
			if err := tx.UpdateInventory(ctx, inv.row(p.id)); err != nil {
				return nil, fmt.Errorf("update inventory %s of provider %s: %w", c.name, p.uuid, err)
			}
		} else if err := tx.InsertInventory(ctx, inv.row(p.id)); err != nil {
			return nil, fmt.Errorf("insert inventory %s of provider %s: %w", c.name, p.uuid, err)
		}
		final[c] = inv
	}
	var dropped []*resourceClass
	for c := range p.inventories {
		if _, ok := final[c]; ok {
			continue
		}
		if err := tx.DeleteInventory(ctx, p.id, c.id); err != nil {
			return nil, fmt.Errorf("delete inventory %s of provider %s: %w", c.name, p.uuid, err)
		}
		dropped = append(dropped, c)
	}
	return func() {
		for _, c := range dropped {
			delete(p.inventories, c)
			delete(c.providers, p)
		}
		for c, inv := range final {
			p.inventories[c] = inv
			c.providers[p] = struct{}{}
		}
	}, nil
}
