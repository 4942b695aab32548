package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	deferred                          int
	unavailable                       map[string]int
	// hits and reread are set once, from the pass's read.
	hits   int
	reread map[string]int
}

func (t *tally) add(f func(*tally)) {
	t.mu.Lock()
	f(t)
	t.mu.Unlock()
}

// syncDriver runs one driver's pass.
func (a *Agent) syncDriver(ctx context.Context, d drivers.Driver) (r Result) {
	start, sent := time.Now(), a.pc.Requests()
	r = Result{Driver: d.Name(), Unavailable: map[string]int{}, Reread: map[string]int{}}
	result := "success"
	defer func() {
		r.Duration = time.Since(start)
		r.Requests = a.pc.Requests().Sub(sent)
		a.metrics.setRequests(r.Driver, r.Requests)
		a.logPass(r)
		// The pass's gauges first, its counter last: a scrape that sees
		// the pass counted sees what it found.
		if r.Err == nil {
			a.metrics.lastSuccess.WithLabelValues(r.Driver).SetToCurrentTime()
			a.metrics.setUnavailable(r.Driver, r.Unavailable)
			a.metrics.deferred.WithLabelValues(r.Driver).Set(float64(r.Deferred))
		}
		a.metrics.syncDuration.WithLabelValues(r.Driver).Observe(r.Duration.Seconds())
		a.metrics.syncs.WithLabelValues(r.Driver, result).Inc()
	}()
	tree, err := observeTree(ctx, d)
	if err != nil {
		// The source could not be read: write nothing, so that Placement
		// stays exactly as it was.
		result, r.Err = "source_error", err
		return r
	}
	r.Providers = len(tree.Providers)
	r.HeldBack = heldBack(tree)
	t := &tally{unavailable: r.Unavailable, reread: r.Reread}
	r.Err = errors.Join(a.syncTree(ctx, d.Name(), tree, t), a.retireVanished(ctx, d, tree, &r))
	a.pruneCache(r.Driver, tree)
	r.Err = errors.Join(r.Err, a.saveCache())
	// r.Writes holds the retirements' writes already.
	r.Created, r.Conflicts, r.FallbackDeleted, r.Deferred = t.created, t.conflicts, t.fbDel, t.deferred
	r.Writes += t.writes
	r.CacheHits = t.hits
	a.metrics.cacheHits.WithLabelValues(r.Driver).Add(float64(t.hits))
	if r.Err != nil {
		result = "error"
	}
	return r
}

// logPass logs a pass's figures: at info when it wrote, lost a race or
// had to re-read providers for another reason than the periodic refresh
// (a first pass, a change made by someone else), else at debug.
func (a *Agent) logPass(r Result) {
	level := zap.DebugLevel
	if r.Writes > 0 || r.Conflicts > 0 || len(r.Reread) > 1 || (len(r.Reread) == 1 && r.Reread[rereadRefresh] == 0) {
		level = zap.InfoLevel
	}
	a.log.Log(level, "sync pass", zap.String("driver", r.Driver), zap.Int("providers", r.Providers),
		zap.Int("writes", r.Writes), zap.Int("created", r.Created), zap.Int("conflicts", r.Conflicts),
		zap.Int("deferred", r.Deferred), zap.Int("retired", r.Retired), zap.Int("retiring", r.Retiring), zap.Int("held_refused", r.Held),
		zap.Int("cache_hits", r.CacheHits), zap.Any("reread", r.Reread),
		zap.Int64("requests", r.Requests.Total()), zap.Int64("request_writes", r.Requests.Write),
		zap.Duration("duration", r.Duration.Round(time.Millisecond)), zap.Error(r.Err))
}

// observeTree asks the driver for its desired tree and checks its shape.
func observeTree(ctx context.Context, d drivers.Driver) (*drivers.Tree, error) {
	tree, err := d.Observe(ctx)
	if err == nil {
		err = tree.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	return tree, nil
}

// syncTree reads what Placement holds for the tree, plans the whole
// pass, then applies the plan.
func (a *Agent) syncTree(ctx context.Context, driver string, tree *drivers.Tree, t *tally) error {
	st, err := a.readTree(ctx, driver, tree)
	if err != nil {
		return a.placementErr(err)
	}
	t.hits = st.hits
	maps.Copy(t.reread, st.reread)
	plan := a.planTree(tree, st)
	// Custom classes and traits first, once, rather than racing to create
	// them from every tree's goroutine.
	if err := a.ensureNames(ctx, plan); err != nil {
		return a.placementErr(err)
	}
	err = errors.Join(append(st.errs, a.applyGroups(ctx, driver, plan, st, t)...)...)
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

// eachGroup runs f for every group, at most limit at once, and waits for
// them all.
func eachGroup[G any](limit int, groups []G, f func(i int, g G)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i, g)
		}()
	}
	wg.Wait()
}

// applyGroups writes the plan's groups concurrently, each in order; a
// provider that fails stops its group, so that its children wait for
// the next pass. It returns one error per failed provider.
func (a *Agent) applyGroups(ctx context.Context, driver string, plan treePlan, st *treeState, t *tally) []error {
	var (
		mu   sync.Mutex
		errs []error
	)
	total := 0
	for _, g := range plan.groups {
		for _, pp := range g {
			if pp.writes() {
				total++
			}
		}
	}
	prog := newProgress(a.log, driver, "write", total)
	defer prog.end()
	eachGroup(a.opts.Concurrency, plan.groups, func(_ int, g []providerPlan) {
		for _, pp := range g {
			err := a.syncProvider(ctx, pp, st.reservedOK, t)
			if pp.writes() {
				prog.step()
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("provider %s: %w", pp.p.Name, err))
				mu.Unlock()
				return
			}
		}
	})
	return errs
}

// syncProvider applies one provider's plan; when a write loses a race it
// re-reads, re-plans and retries (bounded, with jittered backoff).
func (a *Agent) syncProvider(ctx context.Context, pp providerPlan, reservedOK bool, t *tally) error {
	have := pp.have
	retry := a.opts.conflictRetry()
	for attempt := 1; ; attempt++ {
		err := a.apply(ctx, pp, &have, t)
		if err == nil || !conflict(err) || attempt >= retry.Attempts {
			return err
		}
		if placementclient.IsNotFound(err) {
			// Deleted behind the agent's back: re-read, then re-create.
			a.uncache(pp.p.UUID)
		}
		t.add(func(t *tally) { t.conflicts++ })
		a.metrics.conflicts.WithLabelValues(opOf(err)).Inc()
		a.log.Debug("conflict; re-reading", zap.String("provider", pp.p.UUID), zap.Error(err), zap.Int("attempt", attempt))
		if err := retry.Wait(ctx, attempt); err != nil {
			return err
		}
		obs, err := a.reobserve(ctx, pp.p, reservedOK)
		if err != nil {
			return err
		}
		pp = planProvider(pp.p, pp.parent, obs, a.ownedTraits(pp.p.UUID), reservedOK)
		have = pp.have
	}
}

// conflict reports an answer worth re-reading for: a generation race, an
// inventory that gained allocations, a create that raced another (409),
// or a provider deleted since it was cached (404).
func conflict(err error) bool {
	return errors.Is(err, placementclient.ErrConcurrentUpdate) || placementclient.IsNotFound(err) ||
		errors.Is(err, placementclient.ErrInventoryInUse) ||
		errors.Is(err, placementclient.ErrDuplicateName)
}

// heldBack is the reason of each provider of tree with an inventory held
// back, the first class's by name when they differ.
func heldBack(tree *drivers.Tree) map[string]string {
	out := map[string]string{}
	for _, p := range tree.Providers {
		for _, rc := range slices.Sorted(maps.Keys(p.Inventories)) {
			if reason := p.Inventories[rc].Unavailable; reason != "" {
				out[p.UUID] = reason
				break
			}
		}
	}
	return out
}
