package reconciler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// ErrPlacement wraps failures to read or write Placement, so that callers
// (the CLI's exit code) can tell them from Nova failures.
var ErrPlacement = errors.New("placement error")

// AggregateSync mirrors Nova host aggregates into Placement.
type AggregateSync struct {
	Nova      NovaSource
	Placement Placement
	State     *StateFile
	Logger    *zap.Logger
	// Concurrency bounds parallel Placement requests (default 8).
	Concurrency int
	Retry       backoff.Policy
	// MaxRemovals bounds one run's removals (nil: DefaultMaxRemovals).
	MaxRemovals *removallimit.Limit
	// OnRefuse, when set, is told each refusal's reason (the metric).
	OnRefuse func(reason string)
}

// RunFlags change one run: DryRun plans and writes nothing, Force
// applies a plan that would otherwise be refused.
type RunFlags struct {
	DryRun bool
	Force  bool
}

// AggregateResult is one run of AggregateSync.
type AggregateResult struct {
	Plan AggregatePlan
	// Refused is why the plan was not applied ("" when it was, or when
	// Force overrode the refusal, then in Forced).
	Refused string
	Forced  string
	// Strategy is how memberships were read: "by-aggregate" (one listing
	// per owned aggregate) or "by-provider" (chunked member_of=in:
	// listings, then each holder's aggregates), whichever needs fewer
	// requests.
	Strategy string
	// Read is what was read from Nova.
	Read   NovaRead
	DryRun bool
	// Applied has one entry per planned change that was attempted.
	Applied   []AppliedChange
	Conflicts int
	GiveUps   int
}

// NovaRead counts what one run read from Nova.
type NovaRead struct {
	Aggregates   int
	ComputeNodes int
	Hosts        int
}

func novaRead(n novaclient.State) NovaRead {
	return NovaRead{Aggregates: len(n.Aggregates), ComputeNodes: len(n.Nodes), Hosts: len(nodesByHost(n))}
}

// AppliedChange is the outcome of one provider's write.
type AppliedChange struct {
	Provider  string
	Hosts     []string
	Added     []string
	Removed   []string
	Conflicts int
	Err       error
}

// Writes is the number of successful provider writes.
func (r *AggregateResult) Writes() int {
	n := 0
	for _, a := range r.Applied {
		if a.Err == nil && len(a.Added)+len(a.Removed) > 0 {
			n++
		}
	}
	return n
}

// Changes is the number of associations added or removed.
func (r *AggregateResult) Changes() int {
	n := 0
	for _, a := range r.Applied {
		n += len(a.Added) + len(a.Removed)
	}
	return n
}

// Failed returns the changes that could not be written.
func (r *AggregateResult) Failed() []AppliedChange {
	var out []AppliedChange
	for _, a := range r.Applied {
		if a.Err != nil {
			out = append(out, a)
		}
	}
	return out
}

func (s *AggregateSync) log() *zap.Logger {
	if s.Logger == nil {
		return zap.NewNop()
	}
	return s.Logger
}

func (s *AggregateSync) workers() int {
	if s.Concurrency <= 0 {
		return 8
	}
	return s.Concurrency
}

// Run is RunWith without Force.
func (s *AggregateSync) Run(ctx context.Context, dryRun bool) (*AggregateResult, error) {
	return s.RunWith(ctx, RunFlags{DryRun: dryRun})
}

// RunWith reads Nova and Placement, plans, and (unless DryRun) applies
// the plan. Failing to read Nova or Placement is an error and writes
// nothing; so is a refused plan (ErrRefused, unless Force). Failed
// provider writes are in the result and also returned as one error
// wrapping ErrPlacement. Hosts without provider are only reported.
func (s *AggregateSync) RunWith(ctx context.Context, flags RunFlags) (*AggregateResult, error) {
	nova, err := s.Nova.State(ctx)
	if err != nil {
		return nil, err
	}
	ownedAggs, managed := s.State.Ownership()
	in, strategy, full, err := s.read(ctx, nova, ownedAggs, managed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPlacement, err)
	}
	in.Hosts = s.State.ProviderHosts()
	res := &AggregateResult{Plan: PlanAggregates(in), Strategy: strategy, Read: novaRead(nova), DryRun: flags.DryRun}
	owned := setOf(in.Owned, aggregateUUIDs(nova))
	limit := DefaultMaxRemovals()
	if s.MaxRemovals != nil {
		limit = *s.MaxRemovals
	}
	if reason, detail := refusal(nova, s.State.LastGood(), &res.Plan, in.Observed, owned, limit); reason != "" {
		if !flags.Force {
			res.Refused = detail
			s.log().Warn("aggregate mirroring refused; nothing written (sync-aggregates --force applies it)",
				zap.String("reason", reason), zap.String("detail", detail), zap.Bool("dry_run", flags.DryRun))
			if s.OnRefuse != nil {
				s.OnRefuse(reason)
			}
			return res, fmt.Errorf("%w: %s", ErrRefused, detail)
		}
		res.Forced = detail
		s.log().Warn("aggregate mirroring forced past a refusal", zap.String("reason", reason), zap.String("detail", detail))
	}
	if flags.DryRun {
		return res, nil
	}
	return res, s.applyPlan(ctx, nova, in, res, owned, full)
}

// applyPlan writes res.Plan: ownership first, then each provider, then
// what is left to remember.
func (s *AggregateSync) applyPlan(ctx context.Context, nova novaclient.State, in AggregateInput, res *AggregateResult, owned map[string]bool, full map[string]Membership) error {
	hosts := providerHosts(nova, in.Hosts)
	// Remember ownership before writing, so that an association added
	// by this run is never one we have forgotten making.
	if err := s.State.SetOwnership(res.Plan.Owned, res.Plan.Managed, hosts); err != nil {
		return err
	}
	res.Applied = make([]AppliedChange, len(res.Plan.Changes))
	var conflicts, giveUps atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.workers())
	for i, c := range res.Plan.Changes {
		g.Go(func() error {
			a := s.applyOne(gctx, c, owned, full[c.Provider])
			conflicts.Add(int64(a.Conflicts))
			if errors.Is(a.Err, placementclient.ErrConcurrentUpdate) {
				giveUps.Add(1)
			}
			res.Applied[i] = a
			return nil
		})
	}
	_ = g.Wait() // apply reports per provider; it never fails the group
	res.Conflicts, res.GiveUps = int(conflicts.Load()), int(giveUps.Load())

	// Forget remembered aggregates and providers with nothing left to
	// remove; keep those whose removal failed for the next run.
	keepAggs := setOf(aggregateUUIDs(nova))
	keepProviders := map[string]bool{}
	for _, n := range nova.Nodes {
		keepProviders[n.UUID] = true
	}
	for _, h := range res.Plan.Held {
		keepProviders[h.Provider] = true
		for _, a := range h.Aggregates {
			keepAggs[a] = true
		}
	}
	var errs []error
	for _, a := range res.Failed() {
		for _, c := range res.Plan.Changes {
			if c.Provider == a.Provider {
				for _, r := range c.Remove {
					keepAggs[r] = true
				}
			}
		}
		keepProviders[a.Provider] = true
		errs = append(errs, a.Err)
	}
	if err := s.State.SetOwnership(sortedKeys(keepAggs), sortedKeys(keepProviders), hosts); err != nil {
		errs = append(errs, err)
	}
	if err := s.State.SetLastGood(NovaCounts{Aggregates: len(nova.Aggregates), Hypervisors: len(nova.Nodes)}); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %d of %d provider writes failed: %w", ErrPlacement, len(res.Failed()), len(res.Applied), errors.Join(errs...))
	}
	return nil
}

// providerHosts is the host of each current compute node, and the
// remembered host of providers Nova no longer reports.
func providerHosts(nova novaclient.State, remembered map[string]string) map[string]string {
	out := maps.Clone(remembered)
	if out == nil {
		out = map[string]string{}
	}
	for _, n := range nova.Nodes {
		if n.UUID != "" && n.Host != "" {
			out[n.UUID] = n.Host
		}
	}
	return out
}

// read builds the plan input from Placement. full holds providers whose
// complete aggregate list and generation were read on the way.
func (s *AggregateSync) read(ctx context.Context, nova novaclient.State, ownedAggs, managed []string) (AggregateInput, string, map[string]Membership, error) {
	in := AggregateInput{Nova: nova, Owned: ownedAggs, Managed: managed, Existing: map[string]bool{}, Observed: map[string][]string{}}
	all, err := s.Placement.Providers(ctx, ProviderQuery{})
	if err != nil {
		return in, "", nil, err
	}
	for _, p := range all {
		in.Existing[p.UUID] = true
	}
	owned := sortedKeys(setOf(ownedAggs, aggregateUUIDs(nova)))
	managedSet := setOf(managed)
	for _, n := range nova.Nodes {
		managedSet[n.UUID] = true
	}
	var mu sync.Mutex
	full := map[string]Membership{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.workers())
	// One listing per owned aggregate tells exactly who holds it; when
	// there are more owned aggregates than managed providers, reading
	// each holder's aggregates is cheaper.
	if len(owned) <= countExisting(managedSet, in.Existing) {
		for _, a := range owned {
			g.Go(func() error {
				members, err := s.Placement.Providers(gctx, ProviderQuery{MemberOf: a})
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				for _, p := range members {
					in.Observed[p.UUID] = append(in.Observed[p.UUID], a)
				}
				return nil
			})
		}
		err := g.Wait()
		return in, "by-aggregate", full, err
	}
	holders := map[string]bool{}
	for _, chunk := range chunks(owned, maxUUIDsPerQuery) {
		g.Go(func() error {
			members, err := s.Placement.Providers(gctx, ProviderQuery{MemberOf: "in:" + joinComma(chunk)})
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range members {
				if managedSet[p.UUID] {
					holders[p.UUID] = true
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return in, "", nil, err
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(s.workers())
	for p := range holders {
		g.Go(func() error {
			m, err := s.Placement.Aggregates(gctx, p)
			if errors.Is(err, ErrProviderNotFound) {
				return nil // deleted since the listing
			}
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			full[p] = m
			in.Observed[p] = m.Items
			return nil
		})
	}
	err = g.Wait()
	return in, "by-provider", full, err
}

func countExisting(set, existing map[string]bool) int {
	n := 0
	for p := range set {
		if existing[p] {
			n++
		}
	}
	return n
}

func joinComma(s []string) string {
	n := 0
	for _, v := range s {
		n += len(v) + 1
	}
	b := make([]byte, 0, n)
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return string(b)
}

// applyOne writes one provider's change: read its full aggregate list and
// generation (unless already read), re-derive what to add and remove
// from that fresh list, and PUT with the generation. A conflict means
// someone else wrote the provider: re-read and retry, a bounded number
// of times.
func (s *AggregateSync) applyOne(ctx context.Context, c ProviderChange, owned map[string]bool, known Membership) AppliedChange {
	out := AppliedChange{Provider: c.Provider, Hosts: c.Hosts}
	desired := setOf(c.Desired)
	haveKnown := known.Items != nil
	retry := s.Retry
	if retry.Attempts <= 0 {
		retry = DefaultRetry()
	}
	for attempt := 1; ; attempt++ {
		cur := known
		if !haveKnown {
			m, err := s.Placement.Aggregates(ctx, c.Provider)
			if errors.Is(err, ErrUnavailable) && attempt < retry.Attempts {
				if werr := retry.Wait(ctx, attempt); werr != nil {
					out.Err = werr
					return out
				}
				continue
			}
			if err != nil {
				out.Err = err
				return out
			}
			cur = m
		}
		haveKnown = false
		have := setOf(cur.Items)
		var add, remove []string
		for _, a := range c.Desired {
			if !have[a] {
				add = append(add, a)
			}
		}
		next := make([]string, 0, len(cur.Items)+len(add))
		for _, a := range cur.Items {
			if owned[a] && !desired[a] {
				remove = append(remove, a)
				continue
			}
			next = append(next, a)
		}
		if len(add) == 0 && len(remove) == 0 {
			return out // someone else made the same change
		}
		next = append(next, add...)
		slices.Sort(next)
		_, err := s.Placement.SetAggregates(ctx, c.Provider, next, cur.Generation)
		if err == nil {
			out.Added, out.Removed = add, remove
			s.log().Debug("provider aggregates updated", zap.String("provider", c.Provider),
				zap.Strings("hosts", c.Hosts), zap.Strings("added", add), zap.Strings("removed", remove))
			return out
		}
		switch {
		case errors.Is(err, placementclient.ErrConcurrentUpdate):
			out.Conflicts++
			s.log().Debug("generation conflict, re-reading", zap.String("provider", c.Provider), zap.Int("attempt", attempt))
		case errors.Is(err, ErrUnavailable):
			s.log().Debug("placement unavailable, re-reading", zap.String("provider", c.Provider), zap.Int("attempt", attempt), zap.Error(err))
		default:
			out.Err = err
			return out
		}
		if attempt >= retry.Attempts {
			out.Err = fmt.Errorf("provider %s: gave up after %d attempts: %w", c.Provider, attempt, err)
			return out
		}
		if werr := retry.Wait(ctx, attempt); werr != nil {
			out.Err = fmt.Errorf("provider %s: %w", c.Provider, werr)
			return out
		}
	}
}
