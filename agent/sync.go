package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// opError tags an error with the write that failed, for metrics.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

func opOf(err error) string {
	var oe *opError
	if errors.As(err, &oe) {
		return oe.op
	}
	return "read"
}

// tally accumulates one driver pass's counts across goroutines.
type tally struct {
	mu                                sync.Mutex
	created, writes, conflicts, fbDel int
	unavailable                       map[string]int
}

func (t *tally) add(f func(*tally)) {
	t.mu.Lock()
	f(t)
	t.mu.Unlock()
}

// syncDriver runs one driver's pass.
func (a *Agent) syncDriver(ctx context.Context, d drivers.Driver) (r Result) {
	start := time.Now()
	r = Result{Driver: d.Name(), Unavailable: map[string]int{}}
	result := "success"
	defer func() {
		r.Duration = time.Since(start)
		a.metrics.syncs.WithLabelValues(r.Driver, result).Inc()
		a.metrics.syncDuration.WithLabelValues(r.Driver).Observe(r.Duration.Seconds())
		if r.Err == nil {
			a.metrics.lastSuccess.WithLabelValues(r.Driver).SetToCurrentTime()
			a.metrics.setUnavailable(r.Driver, r.Unavailable)
		}
	}()
	tree, err := d.Observe(ctx)
	if err == nil {
		err = tree.Validate()
	}
	if err != nil {
		// The source could not be read: write nothing, so that Placement
		// stays exactly as it was.
		result, r.Err = "source_error", fmt.Errorf("observe: %w", err)
		return r
	}
	r.Providers = len(tree.Providers)
	t := &tally{unavailable: r.Unavailable}
	r.Err = a.syncTree(ctx, tree, t)
	r.Created, r.Writes, r.Conflicts, r.FallbackDeleted = t.created, t.writes, t.conflicts, t.fbDel
	if r.Err != nil {
		result = "error"
	}
	return r
}

// syncTree reads the actual providers once, then syncs each group (a root
// or a provider under an external parent, with its in-tree descendants)
// concurrently; providers within a group go parent first.
func (a *Agent) syncTree(ctx context.Context, tree *drivers.Tree, t *tally) error {
	_, max, err := a.pc.Versions(ctx)
	if err != nil {
		return a.placementErr(err)
	}
	a.metrics.placementUp.Set(1)
	reservedOK := max.AtLeast(placementclient.ReservedEqualsTotal)

	inTree := make(map[string]bool, len(tree.Providers))
	for _, p := range tree.Providers {
		inTree[p.UUID] = true
	}
	parentOf := map[string]string{} // provider uuid -> parent uuid
	var errs []error
	var groups [][]drivers.Provider
	groupOf := map[string]int{}
	for _, p := range tree.Providers {
		switch {
		case p.Parent.IsZero():
			groupOf[p.UUID] = len(groups)
			groups = append(groups, []drivers.Provider{p})
		case inTree[p.Parent.UUID]:
			parentOf[p.UUID] = p.Parent.UUID
			g := groupOf[p.Parent.UUID]
			groupOf[p.UUID] = g
			groups[g] = append(groups[g], p)
		default:
			puuid, err := a.resolveParent(ctx, p.Parent)
			if err != nil {
				errs = append(errs, fmt.Errorf("provider %s: %w", p.Name, err))
				continue
			}
			parentOf[p.UUID] = puuid
			groupOf[p.UUID] = len(groups)
			groups = append(groups, []drivers.Provider{p})
		}
	}
	if len(errs) > 0 && errors.Is(errors.Join(errs...), placementclient.ErrUnavailable) {
		return a.placementErr(errors.Join(errs...))
	}

	listed, err := a.listActual(ctx, tree, groups, parentOf, max)
	if err != nil {
		return a.placementErr(err)
	}
	// Custom classes and traits first, once, rather than racing to create
	// them from every tree's goroutine.
	if err := a.ensureNames(ctx, tree); err != nil {
		return a.placementErr(err)
	}

	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, a.opts.Concurrency)
	)
	for _, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, p := range g {
				var lp *placementclient.Provider
				if v, ok := listed[p.UUID]; ok {
					lp = &v
				}
				if err := a.syncProvider(ctx, p, parentOf[p.UUID], lp, reservedOK, t); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("provider %s: %w", p.Name, err))
					mu.Unlock()
					return // children of a failed provider wait for the next pass
				}
			}
		}()
	}
	wg.Wait()
	err = errors.Join(errs...)
	if errors.Is(err, placementclient.ErrUnavailable) {
		return a.placementErr(err)
	}
	return err
}

// placementErr counts Placement being unreachable or failing.
func (a *Agent) placementErr(err error) error {
	if errors.Is(err, placementclient.ErrUnavailable) {
		a.metrics.placementErrors.Inc()
		a.metrics.placementUp.Set(0)
		// The server may come back as another version (an upgrade).
		a.pc.Forget()
	}
	return err
}

// resolveParent finds an external parent (the host's compute-node
// provider) by uuid if given, else by name; found names are cached.
func (a *Agent) resolveParent(ctx context.Context, ref drivers.Ref) (string, error) {
	if ref.UUID != "" {
		return ref.UUID, nil
	}
	a.mu.Lock()
	u, ok := a.parents[ref.Name]
	a.mu.Unlock()
	if ok {
		return u, nil
	}
	ps, err := a.pc.ListProviders(ctx, placementclient.ListFilter{Name: ref.Name})
	if err != nil {
		return "", err
	}
	if len(ps) != 1 {
		return "", fmt.Errorf("parent provider named %q not found (is the compute node registered?)", ref.Name)
	}
	a.mu.Lock()
	a.parents[ref.Name] = ps[0].UUID
	a.mu.Unlock()
	return ps[0].UUID, nil
}

// listActual reads the providers that exist: one in_tree query per group
// anchor for small trees, one full list for big ones (1000 bare-metal
// nodes are one request, not 1000).
func (a *Agent) listActual(ctx context.Context, tree *drivers.Tree, groups [][]drivers.Provider, parentOf map[string]string, max placementclient.Version) (map[string]placementclient.Provider, error) {
	out := make(map[string]placementclient.Provider, len(tree.Providers))
	keep := func(ps []placementclient.Provider) {
		for _, p := range ps {
			out[p.UUID] = p
		}
	}
	if len(tree.Providers) > a.opts.ListAllThreshold || max.Less(placementclient.NestedProviders) {
		ps, err := a.pc.ListProviders(ctx, placementclient.ListFilter{})
		if err != nil {
			return nil, err
		}
		keep(ps)
		return out, nil
	}
	anchors := map[string]bool{}
	for _, g := range groups {
		anchor := g[0].UUID
		if p := parentOf[anchor]; p != "" {
			anchor = p
		}
		if anchors[anchor] {
			continue
		}
		anchors[anchor] = true
		ps, err := a.pc.ListProviders(ctx, placementclient.ListFilter{InTree: anchor})
		if err != nil {
			return nil, err
		}
		keep(ps)
	}
	return out, nil
}

// syncProvider converges one provider, re-reading and retrying (bounded,
// with jittered backoff) when a write loses a race.
func (a *Agent) syncProvider(ctx context.Context, p drivers.Provider, parent string, listed *placementclient.Provider, reservedOK bool, t *tally) error {
	var (
		have   actual
		exists = listed != nil
		err    error
	)
	if exists {
		if have, exists, err = a.actualFor(ctx, p, listed.Generation); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		err = a.apply(ctx, p, parent, exists, &have, reservedOK, t)
		if err == nil || !conflict(err) || attempt >= a.opts.ConflictRetries {
			return err
		}
		t.add(func(t *tally) { t.conflicts++ })
		a.metrics.conflicts.WithLabelValues(opOf(err)).Inc()
		a.log.Debug("conflict; re-reading", zap.String("provider", p.UUID), zap.Error(err), zap.Int("attempt", attempt+1))
		if err := sleepCtx(ctx, conflictBackoff(a.opts.BackoffBase, attempt)); err != nil {
			return err
		}
		if have, exists, err = a.read(ctx, p); err != nil {
			return err
		}
	}
}

// conflict reports a 409 worth re-reading for: a generation race, an
// inventory that gained allocations, or a create that raced another.
func conflict(err error) bool {
	return errors.Is(err, placementclient.ErrConcurrentUpdate) ||
		errors.Is(err, placementclient.ErrInventoryInUse) ||
		errors.Is(err, placementclient.ErrDuplicateName)
}

// conflictBackoff is a random wait in [0, base·(attempt+1)], at most 2 s
// per step, as Nova's report client retries (random 0..2·i s).
func conflictBackoff(base time.Duration, attempt int) time.Duration {
	d := min(base/10*time.Duration(attempt+1), maxConflictBackoffPerStep)
	return time.Duration(rand.Int64N(int64(d) + 1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// actualFor returns the provider's actual state: the cache when the
// listed generation matches it (every inventory, trait and, from 1.19,
// aggregate write bumps the generation), else a fresh read.
func (a *Agent) actualFor(ctx context.Context, p drivers.Provider, gen int) (actual, bool, error) {
	a.mu.Lock()
	c, ok := a.cache[p.UUID]
	a.mu.Unlock()
	if ok && c.gen == gen && (p.Aggregates == nil || c.aggs != nil) {
		return c, true, nil
	}
	return a.read(ctx, p)
}

// read fetches inventories, traits and (when managed) aggregates, until
// they agree on one generation. exists is false on 404.
func (a *Agent) read(ctx context.Context, p drivers.Provider) (actual, bool, error) {
	for attempt := 0; ; attempt++ {
		inv, err := a.pc.GetInventories(ctx, p.UUID)
		if placementclient.IsNotFound(err) {
			return actual{}, false, nil
		}
		if err != nil {
			return actual{}, false, err
		}
		tr, err := a.pc.GetTraits(ctx, p.UUID)
		if err != nil {
			return actual{}, false, err
		}
		have := actual{gen: inv.Generation, invs: inv.Inventories, traits: tr.Traits}
		same := tr.Generation == inv.Generation
		if p.Aggregates != nil {
			ag, err := a.pc.GetAggregates(ctx, p.UUID)
			if err != nil {
				return actual{}, false, err
			}
			have.aggs = ag.Aggregates
			same = same && (ag.Generation < 0 || ag.Generation == inv.Generation)
		}
		if same || attempt >= a.opts.ConflictRetries {
			a.setCache(p.UUID, have)
			return have, true, nil
		}
	}
}

func (a *Agent) setCache(uuid string, have actual) {
	a.mu.Lock()
	a.cache[uuid] = have
	a.mu.Unlock()
}

// apply makes one provider match p, given have; it updates have and the
// cache after each successful write.
func (a *Agent) apply(ctx context.Context, p drivers.Provider, parent string, exists bool, have *actual, reservedOK bool, t *tally) error {
	if !exists {
		prov, err := a.pc.CreateProvider(ctx, placementclient.NewProvider{UUID: p.UUID, Name: p.Name, ParentUUID: parent})
		if err != nil {
			return &opError{"create", err}
		}
		*have = actual{gen: prov.Generation, invs: map[string]placementclient.Inventory{}, traits: []string{}, aggs: []string{}}
		a.setCache(p.UUID, *have)
		a.wrote("create", t, func(t *tally) { t.created++ })
		a.log.Info("created provider", zap.String("provider", p.UUID), zap.String("name", p.Name), zap.String("parent", parent))
	}

	// Traits before inventories: a device released after programming must
	// already carry its new function trait when it becomes usable.
	want := desiredTraits(p)
	a.mu.Lock()
	prev := a.owned[p.UUID]
	a.mu.Unlock()
	if newTraits := planTraits(have.traits, want, prev); !slices.Equal(newTraits, have.traits) {
		if err := a.ensureTraits(ctx, newTraits); err != nil {
			return err
		}
		gen, err := a.pc.PutTraits(ctx, p.UUID, have.gen, newTraits)
		if err != nil {
			return &opError{"traits", err}
		}
		have.gen, have.traits = gen, newTraits
		a.setCache(p.UUID, *have)
		a.wrote("traits", t, nil)
	}
	a.mu.Lock()
	a.owned[p.UUID] = want
	a.mu.Unlock()

	if err := a.applyInventories(ctx, p, have, reservedOK, t); err != nil {
		return err
	}

	if p.Aggregates != nil {
		if have.aggs == nil {
			ag, err := a.pc.GetAggregates(ctx, p.UUID)
			if err != nil {
				return err
			}
			have.aggs = ag.Aggregates
		}
		if wantAggs := sortedCopy(p.Aggregates); !slices.Equal(wantAggs, have.aggs) {
			gen, err := a.pc.PutAggregates(ctx, p.UUID, have.gen, wantAggs)
			if err != nil {
				return &opError{"aggregates", err}
			}
			if gen >= 0 {
				have.gen = gen
			}
			have.aggs = wantAggs
			a.setCache(p.UUID, *have)
			a.wrote("aggregates", t, nil)
		}
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

// applyInventories writes the inventory when it differs, never removing a
// class that has allocations.
func (a *Agent) applyInventories(ctx context.Context, p drivers.Provider, have *actual, reservedOK bool, t *tally) error {
	plan := planInventories(p.Inventories, have.invs, nil, reservedOK)
	if removes(have.invs, plan.invs) {
		u, err := a.pc.GetUsages(ctx, p.UUID)
		if err != nil {
			return err
		}
		if u.Generation != have.gen {
			return &opError{"inventories", fmt.Errorf("generation moved while reading usages: %w", placementclient.ErrConcurrentUpdate)}
		}
		plan = planInventories(p.Inventories, have.invs, u.Usages, reservedOK)
		if len(plan.keptInUse) > 0 {
			a.log.Info("inventory kept: it has allocations", zap.String("provider", p.UUID), zap.Strings("classes", plan.keptInUse))
		}
	}
	if inventoriesEqual(plan.invs, have.invs) {
		return nil
	}
	for rc := range plan.invs {
		if err := a.ensureClass(ctx, rc); err != nil {
			return err
		}
	}
	gen, err := a.pc.PutInventories(ctx, p.UUID, have.gen, plan.invs)
	if err != nil {
		return &opError{"inventories", err}
	}
	deleted := 0
	for _, rc := range plan.fallbackDeleted {
		if _, had := have.invs[rc]; had && !slices.Contains(plan.keptInUse, rc) {
			deleted++
		}
	}
	if deleted > 0 {
		a.metrics.fallbackDeletes.Add(float64(deleted))
		if a.fallbackLogged.CompareAndSwap(false, true) {
			a.log.Warn("Placement is older than microversion 1.26: unavailable inventory is deleted instead of reserved (logged once)",
				zap.String("provider", p.UUID), zap.Strings("classes", plan.fallbackDeleted))
		}
	}
	a.logHoldBacks(p, have.invs, plan.invs)
	have.gen, have.invs = gen, plan.invs
	a.setCache(p.UUID, *have)
	a.wrote("inventories", t, func(t *tally) { t.fbDel += deleted })
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

// ensureNames creates the custom resource classes and traits the tree
// uses.
func (a *Agent) ensureNames(ctx context.Context, tree *drivers.Tree) error {
	classes := map[string]bool{}
	var traits []string
	for _, p := range tree.Providers {
		for rc := range p.Inventories {
			classes[rc] = true
		}
		traits = append(traits, desiredTraits(p)...)
	}
	for rc := range classes {
		if err := a.ensureClass(ctx, rc); err != nil {
			return err
		}
	}
	slices.Sort(traits)
	return a.ensureTraits(ctx, slices.Compact(traits))
}

// ensureClass creates a custom resource class once per agent lifetime.
func (a *Agent) ensureClass(ctx context.Context, rc string) error {
	if !drivers.IsCustom(rc) {
		return nil
	}
	a.mu.Lock()
	done := a.ensuredRC[rc]
	a.mu.Unlock()
	if done {
		return nil
	}
	if err := a.pc.EnsureResourceClass(ctx, rc); err != nil {
		return err
	}
	a.mu.Lock()
	a.ensuredRC[rc] = true
	a.mu.Unlock()
	return nil
}

// ensureTraits creates custom traits once per agent lifetime.
func (a *Agent) ensureTraits(ctx context.Context, names []string) error {
	for _, n := range names {
		if !drivers.IsCustom(n) {
			continue
		}
		a.mu.Lock()
		done := a.ensuredTr[n]
		a.mu.Unlock()
		if done {
			continue
		}
		if err := a.pc.EnsureTrait(ctx, n); err != nil {
			return err
		}
		a.mu.Lock()
		a.ensuredTr[n] = true
		a.mu.Unlock()
	}
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
