package agent

import (
	"context"
	"fmt"
	"maps"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// planTree plans the pass for tree from st and what the agent remembers.
func (a *Agent) planTree(tree *drivers.Tree, st *treeState) treePlan {
	a.mu.Lock()
	mem := memory{owned: make(map[string][]string, len(tree.Providers)), classes: maps.Clone(a.ensuredRC), traits: maps.Clone(a.ensuredTr)}
	for _, p := range tree.Providers {
		if t, ok := a.owned[p.UUID]; ok {
			mem.owned[p.UUID] = t
		}
	}
	a.mu.Unlock()
	return planTree(tree, st, mem)
}

// ownedTraits returns the traits the agent set on a provider (nil:
// unknown, as after a restart).
func (a *Agent) ownedTraits(uuid string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owned[uuid]
}

// ensureNames creates the plan's custom resource classes and traits.
func (a *Agent) ensureNames(ctx context.Context, plan treePlan) error {
	for _, rc := range plan.classes {
		if err := a.ensureClass(ctx, rc); err != nil {
			return err
		}
	}
	return a.ensureTraits(ctx, plan.traits)
}

// apply writes one provider's plan, given have; it updates have and the
// cache after each successful write.
func (a *Agent) apply(ctx context.Context, pp providerPlan, have *actual, t *tally) error {
	p := pp.p
	if a.noteDeferred(p.UUID, pp.deferredTo) {
		t.add(func(t *tally) { t.deferred++ })
		return nil
	}
	if pp.create {
		prov, err := a.pc.CreateProvider(ctx, placementclient.NewProvider{UUID: p.UUID, Name: p.Name, ParentUUID: pp.parent})
		if err != nil {
			return &opError{"create", err}
		}
		*have = created(prov.Generation, time.Now())
		a.setCache(p.UUID, *have)
		a.wrote("create", t, func(t *tally) { t.created++ })
		a.log.Info("created provider", zap.String("provider", p.UUID), zap.String("name", p.Name), zap.String("parent", pp.parent))
	}

	// Traits before inventories: a device released after programming must
	// already carry its new function trait when it becomes usable.
	if pp.traits != nil {
		// The others in the set are on the provider already, so exist.
		if err := a.ensureTraits(ctx, pp.owned); err != nil {
			return err
		}
		gen, err := a.pc.PutTraits(ctx, p.UUID, have.gen, pp.traits)
		if err != nil {
			return &opError{"traits", err}
		}
		have.gen, have.traits = gen, pp.traits
		a.setCache(p.UUID, *have)
		a.wrote("traits", t, nil)
	}
	a.mu.Lock()
	a.owned[p.UUID] = pp.owned
	a.mu.Unlock()

	if err := a.applyInventories(ctx, pp, have, t); err != nil {
		return err
	}

	if pp.aggs != nil {
		gen, err := a.pc.PutAggregates(ctx, p.UUID, have.gen, pp.aggs)
		if err != nil {
			return &opError{"aggregates", err}
		}
		if gen >= 0 {
			have.gen = gen
		}
		have.aggs = pp.aggs
		a.setCache(p.UUID, *have)
		a.wrote("aggregates", t, nil)
	}
	t.add(func(t *tally) {
		for _, inv := range p.Inventories {
			if inv.Unavailable != "" {
				t.unavailable[inv.Unavailable]++
			}
		}
	})
	return nil
}

// noteDeferred records whether the provider is left to another service
// (mark, the trait that shows it; "" when not), logging each change, and
// reports whether it is.
func (a *Agent) noteDeferred(uuid, mark string) bool {
	a.mu.Lock()
	was := a.deferred[uuid]
	if mark != "" {
		a.deferred[uuid] = true
	} else {
		delete(a.deferred, uuid)
	}
	a.mu.Unlock()
	switch {
	case mark != "" && !was:
		a.log.Info("provider left to the service that reports it: no writes while it carries the trait",
			zap.String("provider", uuid), zap.String("trait", mark))
	case mark == "" && was:
		a.log.Info("provider no longer carries another service's trait: written again", zap.String("provider", uuid))
	}
	return mark != ""
}

// applyInventories writes the planned inventory when it differs, never
// removing a class that has allocations.
func (a *Agent) applyInventories(ctx context.Context, pp providerPlan, have *actual, t *tally) error {
	p, plan := pp.p, pp.inv
	if pp.staleUsages {
		return &opError{"inventories", fmt.Errorf("generation moved while reading usages: %w", placementclient.ErrConcurrentUpdate)}
	}
	if len(plan.keptInUse) > 0 {
		a.log.Info("inventory kept: it has allocations", zap.String("provider", p.UUID), zap.Strings("classes", plan.keptInUse))
	}
	if !pp.putInv {
		return nil
	}
	for _, rc := range pp.putClasses() {
		if err := a.ensureClass(ctx, rc); err != nil {
			return err
		}
	}
	gen, err := a.pc.PutInventories(ctx, p.UUID, have.gen, plan.invs)
	if err != nil {
		return &opError{"inventories", err}
	}
	if pp.fallbackDeletes > 0 {
		a.metrics.fallbackDeletes.Add(float64(pp.fallbackDeletes))
		if a.fallbackLogged.CompareAndSwap(false, true) {
			a.log.Warn("Placement is older than microversion 1.26: unavailable inventory is deleted instead of reserved (logged once)",
				zap.String("provider", p.UUID), zap.Strings("classes", plan.fallbackDeleted))
		}
	}
	a.logHoldBacks(p, have.invs, plan.invs)
	have.gen, have.invs = gen, plan.invs
	a.setCache(p.UUID, *have)
	a.wrote("inventories", t, func(t *tally) { t.fbDel += pp.fallbackDeletes })
	return nil
}

func (a *Agent) wrote(op string, t *tally, f func(*tally)) {
	a.metrics.writes.WithLabelValues(op).Inc()
	t.add(func(t *tally) {
		t.writes++
		if f != nil {
			f(t)
		}
	})
}

// ensureClass creates a custom resource class once per agent lifetime.
func (a *Agent) ensureClass(ctx context.Context, rc string) error {
	return a.ensureOnce(ctx, rc, a.ensuredRC, a.pc.EnsureResourceClass)
}

// ensureTraits creates custom traits once per agent lifetime.
func (a *Agent) ensureTraits(ctx context.Context, names []string) error {
	for _, n := range names {
		if err := a.ensureOnce(ctx, n, a.ensuredTr, a.pc.EnsureTrait); err != nil {
			return err
		}
	}
	return nil
}

// ensureOnce creates a custom name unless done (guarded by a.mu) says it
// was created already; other names are standard and exist.
func (a *Agent) ensureOnce(ctx context.Context, name string, done map[string]bool, create func(context.Context, string) error) error {
	if !drivers.IsCustom(name) {
		return nil
	}
	a.mu.Lock()
	ok := done[name]
	a.mu.Unlock()
	if ok {
		return nil
	}
	if err := create(ctx, name); err != nil {
		return err
	}
	a.mu.Lock()
	done[name] = true
	a.mu.Unlock()
	return nil
}

// logHoldBacks logs each class whose inventory became, or stopped being,
// wholly reserved by a write: the lifecycle an operator looks for (a node
// going into cleaning and back). It runs only after a write, so a steady
// state logs nothing.
func (a *Agent) logHoldBacks(p drivers.Provider, before, after map[string]placementclient.Inventory) {
	whole := func(inv placementclient.Inventory, ok bool) bool {
		return ok && inv.Total > 0 && inv.Reserved == inv.Total
	}
	for rc, inv := range after {
		old, had := before[rc]
		switch held, was := whole(inv, true), whole(old, had); {
		case held && !was:
			a.log.Info("inventory held back: reserved = total", zap.String("provider", p.UUID), zap.String("name", p.Name),
				zap.String("class", rc), zap.Int("total", inv.Total), zap.String("reason", p.Inventories[rc].Unavailable))
		case was && !held:
			a.log.Info("inventory released", zap.String("provider", p.UUID), zap.String("name", p.Name),
				zap.String("class", rc), zap.Int("total", inv.Total), zap.Int("reserved", inv.Reserved))
		}
	}
}
