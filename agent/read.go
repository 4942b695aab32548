package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// treeState is what a pass knows before it writes: the desired tree in
// groups, and what Placement holds for each provider.
type treeState struct {
	// reservedOK: the server takes reserved == total (1.26).
	reservedOK bool
	// groups are written concurrently, each in order, parents first: a
	// root, or a provider under an external parent, with its in-tree
	// descendants. A group ends before a provider that could not be read.
	groups   [][]drivers.Provider
	parentOf map[string]string // provider uuid -> parent uuid
	observed map[string]observed
	// errs name the providers left out: an external parent not found, a
	// read that failed.
	errs []error
}

// readTree reads what Placement holds for tree: the server's version,
// the external parents, the providers that exist and the state of each.
// An error means nothing can be planned.
func (a *Agent) readTree(ctx context.Context, tree *drivers.Tree) (*treeState, error) {
	_, max, err := a.pc.Versions(ctx)
	if err != nil {
		return nil, err
	}
	a.metrics.placementUp.Set(1)
	st := &treeState{reservedOK: max.AtLeast(placementclient.ReservedEqualsTotal), observed: map[string]observed{}}
	a.groupTree(ctx, tree, st)
	if len(st.errs) > 0 && errors.Is(errors.Join(st.errs...), placementclient.ErrUnavailable) {
		return nil, errors.Join(st.errs...)
	}
	listed, err := a.listActual(ctx, tree, st.groups, st.parentOf, max)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	eachGroup(a.opts.Concurrency, st.groups, func(i int, g []drivers.Provider) {
		for j, p := range g {
			obs, err := a.observe(ctx, p, listed, st.reservedOK)
			mu.Lock()
			if err != nil {
				st.errs = append(st.errs, fmt.Errorf("provider %s: %w", p.Name, err))
				st.groups[i] = g[:j] // its children wait for the next pass
				mu.Unlock()
				return
			}
			st.observed[p.UUID] = obs
			mu.Unlock()
		}
	})
	return st, nil
}

// groupTree splits the tree into st.groups, resolving external parents;
// a provider whose parent cannot be found is left out, with an error.
func (a *Agent) groupTree(ctx context.Context, tree *drivers.Tree, st *treeState) {
	inTree := make(map[string]bool, len(tree.Providers))
	for _, p := range tree.Providers {
		inTree[p.UUID] = true
	}
	st.parentOf = map[string]string{}
	groupOf := map[string]int{}
	for _, p := range tree.Providers {
		switch {
		case p.Parent.IsZero():
			groupOf[p.UUID] = len(st.groups)
			st.groups = append(st.groups, []drivers.Provider{p})
		case inTree[p.Parent.UUID]:
			st.parentOf[p.UUID] = p.Parent.UUID
			g := groupOf[p.Parent.UUID]
			groupOf[p.UUID] = g
			st.groups[g] = append(st.groups[g], p)
		default:
			puuid, err := a.resolveParent(ctx, p.Parent)
			if err != nil {
				st.errs = append(st.errs, fmt.Errorf("provider %s: %w", p.Name, err))
				continue
			}
			st.parentOf[p.UUID] = puuid
			groupOf[p.UUID] = len(st.groups)
			st.groups = append(st.groups, []drivers.Provider{p})
		}
	}
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

// observe returns what Placement holds for p: nothing when it was not
// listed, else its state (the cache when the listed generation matches
// it) and, when the plan would drop a class, its usages.
func (a *Agent) observe(ctx context.Context, p drivers.Provider, listed map[string]placementclient.Provider, reservedOK bool) (observed, error) {
	lp, ok := listed[p.UUID]
	if !ok {
		return observed{}, nil
	}
	have, exists, err := a.actualFor(ctx, p, lp.Generation)
	if err != nil || !exists {
		return observed{}, err
	}
	return a.withUsages(ctx, p, have, reservedOK)
}

// reobserve reads p afresh, after a write lost a race.
func (a *Agent) reobserve(ctx context.Context, p drivers.Provider, reservedOK bool) (observed, error) {
	have, exists, err := a.read(ctx, p)
	if err != nil || !exists {
		return observed{}, err
	}
	return a.withUsages(ctx, p, have, reservedOK)
}

// withUsages reads p's usages when its desired inventory drops a class:
// a class that has allocations is kept.
func (a *Agent) withUsages(ctx context.Context, p drivers.Provider, have actual, reservedOK bool) (observed, error) {
	obs := observed{exists: true, have: have}
	if !removes(have.invs, planInventories(p.Inventories, have.invs, nil, reservedOK).invs) {
		return obs, nil
	}
	u, err := a.pc.GetUsages(ctx, p.UUID)
	if err != nil {
		return observed{}, err
	}
	obs.usages = &u
	return obs, nil
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
