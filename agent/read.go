package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/microversion"
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
	// hits counts providers taken from the cache, reread those read
	// afresh by reason.
	hits   int
	reread map[string]int
}

// readTree reads what Placement holds for tree: the server's version,
// the external parents, the providers that exist and the state of each
// (from the cache where it holds). An error means nothing can be planned.
func (a *Agent) readTree(ctx context.Context, driver string, tree *drivers.Tree) (*treeState, error) {
	_, max, err := a.pc.Versions(ctx)
	if err != nil {
		return nil, err
	}
	a.metrics.placementUp.Set(1)
	st := &treeState{reservedOK: max.AtLeast(microversion.ReservedEqualTotal), observed: map[string]observed{}, reread: map[string]int{}}
	a.groupTree(ctx, tree, st)
	if len(st.errs) > 0 && errors.Is(errors.Join(st.errs...), placementclient.ErrUnavailable) {
		return nil, errors.Join(st.errs...)
	}
	listed, err := a.listActual(ctx, tree, st.groups, st.parentOf, max)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	prog := newProgress(a.log, driver, "read", len(tree.Providers))
	now := time.Now()
	eachGroup(a.opts.Concurrency, st.groups, func(i int, g []drivers.Provider) {
		for j, p := range g {
			obs, why, err := a.observe(ctx, p, listed, st.reservedOK, now)
			prog.step()
			mu.Lock()
			if err != nil {
				st.errs = append(st.errs, fmt.Errorf("provider %s: %w", p.Name, err))
				st.groups[i] = g[:j] // its children wait for the next pass
				mu.Unlock()
				return
			}
			st.observed[p.UUID] = obs
			st.count(why, obs.exists)
			mu.Unlock()
		}
	})
	prog.end()
	return st, nil
}

// count tallies one observed provider: a cache hit, or a re-read and why
// (guarded by the caller).
func (st *treeState) count(why string, exists bool) {
	switch {
	case why != "":
		st.reread[why]++
	case exists:
		st.hits++
	}
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

// listActual lists the providers that exist, when that is cheap: one
// in_tree query per tree for a driver of a few trees (an FPGA host), a
// full list before 1.14. A driver of many trees (bare-metal nodes, each
// its own root) is not listed: Placement has no filter for "this agent's
// providers", and the whole cloud's list is about 77 MB at 100k
// providers. Its providers' cached states are trusted instead (nil
// map): every write is generation-checked, a 409 or 404 re-reads, and
// the periodic re-read catches what others changed. One full list is
// made when many of its states are unknown (a first pass) or restored
// from the state file (after a restart, to check them against the
// generations Placement holds): one request instead of one or two per
// provider.
func (a *Agent) listActual(ctx context.Context, tree *drivers.Tree, groups [][]drivers.Provider, parentOf map[string]string, max microversion.Version) (map[string]placementclient.Provider, error) {
	anchors := treeAnchors(groups, parentOf)
	switch {
	case len(anchors) > a.opts.ListTreesMax && a.unknownIn(tree) <= a.opts.ListTreesMax:
		return nil, a.ping(ctx)
	case len(anchors) > a.opts.ListTreesMax || max.Less(microversion.Nested):
		return a.listProviders(ctx, placementclient.ListFilter{}, len(tree.Providers))
	}
	out := make(map[string]placementclient.Provider, len(tree.Providers))
	for _, anchor := range anchors {
		ps, err := a.pc.ListProviders(ctx, placementclient.ListFilter{InTree: anchor})
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[p.UUID] = p
		}
	}
	return out, nil
}

// listProviders lists the providers matching f, by uuid.
func (a *Agent) listProviders(ctx context.Context, f placementclient.ListFilter, size int) (map[string]placementclient.Provider, error) {
	ps, err := a.pc.ListProviders(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make(map[string]placementclient.Provider, size)
	for _, p := range ps {
		out[p.UUID] = p
	}
	return out, nil
}

// ping asks Placement for its versions (a few hundred bytes), so that a
// pass that needs nothing else from it still finds out that it is down,
// or was upgraded.
func (a *Agent) ping(ctx context.Context) error {
	a.pc.Forget()
	_, _, err := a.pc.Versions(ctx)
	return err
}

// treeAnchors are the trees' roots to list with in_tree, in order: each
// group's first provider, or its external parent.
func treeAnchors(groups [][]drivers.Provider, parentOf map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range groups {
		anchor := g[0].UUID
		if p := parentOf[anchor]; p != "" {
			anchor = p
		}
		if !seen[anchor] {
			seen[anchor] = true
			out = append(out, anchor)
		}
	}
	return out
}

// unknownIn counts the tree's providers whose state is not cached, or
// was restored from the state file and is not checked yet.
func (a *Agent) unknownIn(tree *drivers.Tree) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, p := range tree.Providers {
		if c, ok := a.cache[p.UUID]; !ok || c.restored {
			n++
		}
	}
	return n
}

// observe returns what Placement holds for p: nothing when a list was
// made without it, else its state (the cache when it holds, see
// staleReason) and, when the plan would drop a class, its usages. why is
// the reason it was re-read, "" when it was not.
func (a *Agent) observe(ctx context.Context, p drivers.Provider, listed map[string]placementclient.Provider, reservedOK bool, now time.Time) (obs observed, why string, err error) {
	gen := -1 // not listed: the cache is trusted
	if listed != nil {
		lp, ok := listed[p.UUID]
		if !ok {
			a.uncache(p.UUID)
			return observed{}, "", nil
		}
		gen = lp.Generation
	}
	have, why, exists, err := a.actualFor(ctx, p, gen, now)
	if err != nil || !exists {
		return observed{}, why, err
	}
	obs, err = a.withUsages(ctx, p, have, reservedOK)
	return obs, why, err
}

// reobserve reads p afresh, after a write lost a race.
func (a *Agent) reobserve(ctx context.Context, p drivers.Provider, reservedOK bool) (observed, error) {
	a.metrics.reread.WithLabelValues(rereadConflict).Inc()
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

// actualFor returns the provider's actual state: the cache when it holds
// for the listed generation (gen < 0: not listed), else a fresh read (why
// says the reason).
func (a *Agent) actualFor(ctx context.Context, p drivers.Provider, gen int, now time.Time) (have actual, why string, exists bool, err error) {
	a.mu.Lock()
	c, ok := a.cache[p.UUID]
	a.mu.Unlock()
	why = a.staleReason(c, ok, p.Aggregates != nil, p.UUID, gen, now)
	if why == "" {
		if c.restored {
			// The list just showed the restored state's generation.
			c.restored, c.readAt = false, now
			a.setCache(p.UUID, c)
		}
		return c, "", true, nil
	}
	a.metrics.reread.WithLabelValues(why).Inc()
	have, exists, err = a.read(ctx, p)
	return have, why, exists, err
}

// read fetches inventories, traits and (when managed) aggregates, until
// they agree on one generation, as many times as a conflict is retried;
// it reads again at once (a write landed between two reads: nothing to
// wait for). exists is false on 404.
func (a *Agent) read(ctx context.Context, p drivers.Provider) (actual, bool, error) {
	retry := a.opts.conflictRetry()
	for attempt := 1; ; attempt++ {
		inv, err := a.pc.GetInventories(ctx, p.UUID)
		if placementclient.IsNotFound(err) {
			a.uncache(p.UUID)
			return actual{}, false, nil
		}
		if err != nil {
			return actual{}, false, err
		}
		tr, err := a.pc.GetTraits(ctx, p.UUID)
		if err != nil {
			return actual{}, false, err
		}
		have := actual{gen: inv.Generation, invs: inv.Inventories, traits: tr.Traits, readAt: time.Now()}
		same := tr.Generation == inv.Generation
		if p.Aggregates != nil {
			ag, err := a.pc.GetAggregates(ctx, p.UUID)
			if err != nil {
				return actual{}, false, err
			}
			have.aggs = ag.Aggregates
			same = same && (ag.Generation < 0 || ag.Generation == inv.Generation)
		}
		if same || attempt >= retry.Attempts {
			a.setCache(p.UUID, have)
			return have, true, nil
		}
	}
}

func (a *Agent) setCache(uuid string, have actual) {
	a.mu.Lock()
	a.cache[uuid] = have
	a.cacheDirty = true
	a.mu.Unlock()
}
