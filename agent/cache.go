package agent

import (
	"maps"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// restoreCache fills the cache from the state file's provider states,
// marked restored: the first pass checks them against Placement's
// generations before trusting them (see listActual).
func (a *Agent) restoreCache(saved map[string]savedProvider) {
	now := time.Now()
	for u, sp := range saved {
		c := actual{gen: sp.Generation, invs: sp.Inventories, traits: sp.Traits, readAt: now, restored: true}
		if c.invs == nil {
			c.invs = map[string]placementclient.Inventory{}
		}
		if sp.Aggregates != nil {
			c.aggs = *sp.Aggregates
		}
		a.cache[u] = c
		if sp.Owned != nil {
			a.owned[u] = sp.Owned
		}
	}
}

// pruneCache drops what the agent remembers of the providers that left
// the driver's tree since its last pass (a node moved to another
// conductor group, a vanished one), and the cached state of those it
// keeps: it no longer writes them, and a provider that comes back is
// read afresh.
func (a *Agent) pruneCache(driver string, tree *drivers.Tree) {
	cur := make(map[string]bool, len(tree.Providers)+len(tree.Keep))
	for _, p := range tree.Providers {
		cur[p.UUID] = true
	}
	for _, u := range tree.Keep {
		cur[u] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for u := range a.observed[driver] {
		if !cur[u] {
			delete(a.cache, u)
			delete(a.owned, u)
			delete(a.deferred, u)
			a.cacheDirty = true
		}
	}
	// A kept provider is not written meanwhile, so what others do to it
	// goes unseen: it is read afresh once it is described again.
	for _, u := range tree.Keep {
		if _, ok := a.cache[u]; ok {
			delete(a.cache, u)
			a.cacheDirty = true
		}
	}
	a.observed[driver] = cur
	a.metrics.cached.Set(float64(len(a.cache)))
}

// pruneRestored drops the restored states that no driver observed in a
// pass where every driver observed its tree: they are of providers this
// agent no longer reports.
func (a *Agent) pruneRestored() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.observed) < len(a.opts.Drivers) {
		return
	}
	for u, c := range a.cache {
		if !c.restored {
			continue
		}
		seen := false
		for _, set := range a.observed {
			seen = seen || set[u]
		}
		if !seen {
			delete(a.cache, u)
			delete(a.owned, u)
			a.cacheDirty = true
		}
	}
	a.metrics.cached.Set(float64(len(a.cache)))
}

// saveCache writes the cached states to the state file when they changed
// since they were last saved (and there is a state file).
func (a *Agent) saveCache() error {
	if a.opts.StateFile == "" {
		return nil
	}
	a.mu.Lock()
	if !a.cacheDirty {
		a.mu.Unlock()
		return nil
	}
	saved := make(map[string]savedProvider, len(a.cache))
	for u, c := range a.cache {
		sp := savedProvider{Generation: c.gen, Inventories: maps.Clone(c.invs), Traits: c.traits, Owned: a.owned[u]}
		if c.aggs != nil {
			aggs := c.aggs
			sp.Aggregates = &aggs
		}
		saved[u] = sp
	}
	a.cacheDirty = false
	a.mu.Unlock()
	return a.reported.setProviders(saved)
}
