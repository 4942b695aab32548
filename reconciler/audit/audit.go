package audit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// Finding kinds, also the kind label of placement_syncd_audit_findings.
const (
	FindingOrphanedConsumer   = "orphaned_consumer"
	FindingStaleProvider      = "stale_provider"
	FindingOverCapacity       = "over_capacity"
	FindingIncompleteConsumer = "incomplete_consumer"
)

// FindingKinds lists the kinds in the order they are reported.
func FindingKinds() []string {
	return []string{FindingOrphanedConsumer, FindingStaleProvider, FindingOverCapacity, FindingIncompleteConsumer}
}

// IncompleteConsumerID is the project and user Placement records for a
// consumer written before microversion 1.8 ([placement]
// incomplete_consumer_project_id and incomplete_consumer_user_id
// defaults): nobody owns it.
const IncompleteConsumerID = "00000000-0000-0000-0000-000000000000"

// DefaultGrace is how long a consumer unknown to Nova is left alone
// after it appeared: a claim whose instance is still being built.
const DefaultGrace = 10 * time.Minute

// DefaultMaxRemovals bounds the consumers one audit may delete: a
// tenth of Nova's consumers in Placement.
func DefaultMaxRemovals() removallimit.Limit { return removallimit.Limit{N: 10, Percent: true} }

// Auditor compares Placement's allocations and providers with Nova. It
// is safe for concurrent use.
type Auditor struct {
	Placement Placement
	// Nova are the sources of Nova's view (the compute API, the cell
	// databases); a record any of them holds is known.
	Nova []Nova
	// Grace leaves alone a consumer that changed within it.
	Grace time.Duration
	// MaxRemovals bounds the consumers one run deletes.
	MaxRemovals removallimit.Limit
	Concurrency int
	// Remember keeps when each consumer was first seen, for a server
	// that gives no time of change (no Last-Modified): the job's runs
	// share it. Without it such a consumer is never old enough to touch.
	Remember bool
	Now      func() time.Time
	Logger   *zap.Logger

	mu   sync.Mutex
	seen map[string]time.Time
}

// Flags are one run's choices.
type Flags struct {
	// Delete removes the orphaned consumers found (DELETE
	// /allocations/{consumer}); false is a dry run.
	Delete bool
	// Force deletes more than MaxRemovals.
	Force bool
}

// Finding is one thing the audit found.
type Finding struct {
	Kind     string `json:"kind"`
	Consumer string `json:"consumer,omitempty"`
	Provider string `json:"provider,omitempty"`
	Class    string `json:"resource_class,omitempty"`
	// Consumers hold the class on the provider (over_capacity).
	Consumers []string `json:"consumers,omitempty"`
	Detail    string   `json:"detail"`
	// Unconfirmed says why the finding is only a suspicion that nothing
	// acts on: Nova was read in part.
	Unconfirmed string `json:"unconfirmed,omitempty"`
}

// FreshConsumer is a consumer unknown to Nova but within the grace
// period: no finding, never touched.
type FreshConsumer struct {
	Consumer string `json:"consumer"`
	Why      string `json:"why"`
}

// Result is one audit's answer.
type Result struct {
	Providers int `json:"providers"`
	Consumers int `json:"consumers"`
	// NovaConsumers are the consumers judged against Nova (instances and
	// migrations by type or by the classes they hold).
	NovaConsumers int             `json:"nova_consumers"`
	Findings      []Finding       `json:"findings"`
	Fresh         []FreshConsumer `json:"fresh,omitempty"`
	// Partial says why Nova was read only in part, or not at all:
	// nothing is deleted then.
	Partial []string `json:"nova_partial,omitempty"`
	// NovaUnread: Nova could not be read at all, so neither orphans nor
	// stale providers could be looked for.
	NovaUnread bool              `json:"nova_unread,omitempty"`
	DryRun     bool              `json:"dry_run"`
	Deleted    []string          `json:"deleted,omitempty"`
	Failed     map[string]string `json:"delete_failed,omitempty"`
	// Refused is why --delete deleted nothing (the mass-removal guard).
	Refused string `json:"refused,omitempty"`
}

// Count is the number of confirmed findings of kind.
func (r *Result) Count(kind string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Kind == kind && f.Unconfirmed == "" {
			n++
		}
	}
	return n
}

// Orphans are the confirmed orphaned consumers.
func (r *Result) Orphans() []string {
	var out []string
	for _, f := range r.Findings {
		if f.Kind == FindingOrphanedConsumer && f.Unconfirmed == "" {
			out = append(out, f.Consumer)
		}
	}
	return out
}

// placementSnapshot is what the audit read from Placement.
type placementSnapshot struct {
	providers   []Provider
	computeRPs  map[string]bool // providers with the COMPUTE_NODE trait
	inventories map[string]map[string]Inventory
	allocations map[string]map[string]map[string]int64 // provider, consumer, class
	consumers   map[string]ConsumerInfo
}

// Run audits once. The error wraps novaclient.ErrUnavailable when Nova could
// not be read at all (the result then holds what Placement alone shows),
// ErrRefused when the guard stopped --delete; other errors are
// Placement's, with no result.
func (a *Auditor) Run(ctx context.Context, flags Flags) (*Result, error) {
	snap, err := a.readPlacement(ctx)
	if err != nil {
		return nil, err
	}
	nova, novaErr := readNova(ctx, a.Nova)
	res := &Result{Providers: len(snap.providers), Consumers: len(snap.consumers), DryRun: !flags.Delete}
	if novaErr != nil {
		res.NovaUnread = true
		res.Partial = []string{"Nova not read: " + novaErr.Error()}
	} else {
		res.Partial = nova.Partial
	}
	a.placementFindings(snap, res)
	if novaErr == nil {
		a.novaFindings(snap, nova, res)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool { return kindOrder(res.Findings[i].Kind) < kindOrder(res.Findings[j].Kind) })
	if novaErr != nil && !errors.Is(novaErr, novaclient.ErrUnavailable) {
		novaErr = fmt.Errorf("%w: %w", novaclient.ErrUnavailable, novaErr)
	}
	if novaErr != nil {
		return res, novaErr
	}
	if flags.Delete && len(res.Partial) == 0 {
		if err := a.remove(ctx, res, flags.Force); err != nil {
			return res, err
		}
	}
	return res, nil
}

func kindOrder(kind string) int {
	for i, k := range FindingKinds() {
		if k == kind {
			return i
		}
	}
	return len(FindingKinds())
}

// readPlacement reads every provider's inventories and allocations,
// then every consumer, Concurrency requests at a time.
func (a *Auditor) readPlacement(ctx context.Context) (*placementSnapshot, error) {
	providers, err := a.Placement.AuditProviders(ctx, "")
	if err != nil {
		return nil, err
	}
	computes, err := a.Placement.AuditProviders(ctx, "COMPUTE_NODE")
	if err != nil {
		return nil, err
	}
	s := &placementSnapshot{providers: providers, computeRPs: map[string]bool{}, inventories: map[string]map[string]Inventory{},
		allocations: map[string]map[string]map[string]int64{}, consumers: map[string]ConsumerInfo{}}
	for _, p := range computes {
		s.computeRPs[p.UUID] = true
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(a.Concurrency, 1))
	for _, p := range providers {
		g.Go(func() error {
			inv, err := a.Placement.ProviderInventories(gctx, p.UUID)
			if err != nil {
				return err
			}
			allocs, err := a.Placement.ProviderAllocations(gctx, p.UUID)
			if err != nil {
				return err
			}
			mu.Lock()
			s.inventories[p.UUID], s.allocations[p.UUID] = inv, allocs
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, a.readConsumers(ctx, s)
}

// readConsumers reads each consumer the providers' allocations name; one
// gone meanwhile (no allocations left) is left out.
func (a *Auditor) readConsumers(ctx context.Context, s *placementSnapshot) error {
	names := map[string]bool{}
	for _, byConsumer := range s.allocations {
		for c := range byConsumer {
			names[c] = true
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(a.Concurrency, 1))
	for c := range names {
		g.Go(func() error {
			info, err := a.Placement.Consumer(gctx, c)
			if err != nil {
				return err
			}
			if len(info.Providers) == 0 {
				return nil
			}
			mu.Lock()
			s.consumers[c] = info
			mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// placementFindings are those Placement alone shows: usage above
// capacity and incomplete consumers.
func (a *Auditor) placementFindings(s *placementSnapshot, res *Result) {
	for _, p := range s.providers {
		invs := s.inventories[p.UUID]
		for _, class := range sortedKeys(invs) {
			inv := invs[class]
			var used int64
			var holders []string
			for c, rcs := range s.allocations[p.UUID] {
				if n := rcs[class]; n > 0 {
					used += n
					holders = append(holders, c)
				}
			}
			if capacity := inv.Capacity(); float64(used) > capacity {
				sort.Strings(holders)
				res.Findings = append(res.Findings, Finding{Kind: FindingOverCapacity, Provider: p.UUID, Class: class, Consumers: holders,
					Detail: fmt.Sprintf("provider %s (%s) %s: used %d > capacity %g ((total %d − reserved %d) × %g), held by %s",
						p.UUID, p.Name, class, used, capacity, inv.Total, inv.Reserved, inv.AllocationRatio, strings.Join(holders, ","))})
			}
		}
	}
	for _, c := range sortedKeys(s.consumers) {
		info := s.consumers[c]
		if info.Project == IncompleteConsumerID || info.User == IncompleteConsumerID {
			res.Findings = append(res.Findings, Finding{Kind: FindingIncompleteConsumer, Consumer: c,
				Detail: fmt.Sprintf("consumer %s has the placeholder owner (project %s, user %s): written before microversion 1.8, nobody owns it", c, info.Project, info.User)})
		}
	}
}

// novaFindings are orphaned consumers and stale providers, unconfirmed
// when Nova was read in part.
func (a *Auditor) novaFindings(s *placementSnapshot, nova novaclient.Records, res *Result) {
	unconfirmed := ""
	if len(nova.Partial) > 0 {
		unconfirmed = fmt.Sprintf("Nova read in part (%d reason(s) listed as nova partial)", len(nova.Partial))
	}
	now := a.now()
	live := map[string]bool{}
	for _, c := range sortedKeys(s.consumers) {
		info := s.consumers[c]
		live[c] = true
		if !novaConsumer(info, s.computeRPs, nova.ComputeNodes) {
			continue
		}
		res.NovaConsumers++
		if nova.Instances[c] || nova.Migrations[c] {
			continue
		}
		if fresh, why := a.fresh(c, info, now); fresh {
			res.Fresh = append(res.Fresh, FreshConsumer{Consumer: c, Why: why})
			continue
		}
		res.Findings = append(res.Findings, Finding{Kind: FindingOrphanedConsumer, Consumer: c, Unconfirmed: unconfirmed,
			Detail: fmt.Sprintf("consumer %s (project %s, type %s) holds %s but is neither a Nova instance nor an in-progress migration",
				c, info.Project, typeName(info.Type), describeHeld(info.Providers))})
	}
	a.forget(live)
	for _, p := range s.providers {
		if !s.computeRPs[p.UUID] || nova.ComputeNodes[p.UUID] || len(s.allocations[p.UUID]) > 0 {
			continue
		}
		res.Findings = append(res.Findings, Finding{Kind: FindingStaleProvider, Provider: p.UUID, Unconfirmed: unconfirmed,
			Detail: fmt.Sprintf("provider %s (%s) is a COMPUTE_NODE with no allocations whose compute node Nova does not list", p.UUID, p.Name)})
	}
}

// novaConsumer tells Nova's consumers from other services': by type
// (1.38) when it has one, else, as nova-manage placement audit, by
// holding a class Nova allocates, or a custom class on a compute node
// itself (an Ironic node's CUSTOM_BAREMETAL_*).
func novaConsumer(info ConsumerInfo, computeRPs, computeNodes map[string]bool) bool {
	switch info.Type {
	case "INSTANCE", "MIGRATION":
		return true
	case "", "unknown":
	default:
		return false
	}
	for rp, rcs := range info.Providers {
		for class := range rcs {
			if novaClass(class) || (strings.HasPrefix(class, "CUSTOM_") && (computeRPs[rp] || computeNodes[rp])) {
				return true
			}
		}
	}
	return false
}

// novaClass reports the standard classes Nova allocates to instances
// (nova-manage's NOVA_RCS).
func novaClass(class string) bool {
	switch class {
	case "VCPU", "PCPU", "MEMORY_MB", "DISK_GB", "VGPU", "NET_BW_EGR_KILOBIT_PER_SEC", "NET_BW_IGR_KILOBIT_PER_SEC", "MEM_ENCRYPTION_CONTEXT":
		return true
	}
	return false
}

func typeName(t string) string {
	if t == "" {
		return "unknown"
	}
	return t
}

// describeHeld prints provider:CLASS=n,… in a stable order.
func describeHeld(byProvider map[string]map[string]int64) string {
	var parts []string
	for _, rp := range sortedKeys(byProvider) {
		rcs := byProvider[rp]
		var held []string
		for _, class := range sortedKeys(rcs) {
			held = append(held, fmt.Sprintf("%s=%d", class, rcs[class]))
		}
		parts = append(parts, rp+":"+strings.Join(held, ","))
	}
	return strings.Join(parts, " ")
}

func (a *Auditor) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

// fresh reports whether consumer c is within the grace period, and why.
// Placement's Last-Modified is the newest change of its allocations;
// without it the job's memory of when it first saw c decides, and
// without that c's age is unknown: fresh, never touched.
func (a *Auditor) fresh(c string, info ConsumerInfo, now time.Time) (bool, string) {
	if !info.Changed.IsZero() {
		age := now.Sub(info.Changed)
		return age < a.Grace, fmt.Sprintf("allocations changed %s ago, within the grace period %s", age.Round(time.Second), a.Grace)
	}
	if !a.Remember {
		return true, "Placement gives no time of change (no Last-Modified): its age is unknown"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]time.Time{}
	}
	first, ok := a.seen[c]
	if !ok {
		a.seen[c], first = now, now
	}
	age := now.Sub(first)
	return age < a.Grace, fmt.Sprintf("first seen %s ago (Placement gives no time of change), within the grace period %s", age.Round(time.Second), a.Grace)
}

// forget drops the first-seen times of consumers no longer in Placement.
func (a *Auditor) forget(live map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.seen {
		if !live[c] {
			delete(a.seen, c)
		}
	}
}

// remove deletes the confirmed orphans, unless there are more than
// MaxRemovals allow (without Force). Each is read again first: one that
// changed meanwhile, or is gone, is left.
func (a *Auditor) remove(ctx context.Context, res *Result, force bool) error {
	orphans := res.Orphans()
	if len(orphans) == 0 {
		return nil
	}
	if allowed := a.MaxRemovals.Allowed(res.NovaConsumers); len(orphans) > allowed && !force {
		res.Refused = fmt.Sprintf("%d orphaned consumers of %d Nova consumers is more than max_removals %s (%d); nothing deleted (--force deletes them)",
			len(orphans), res.NovaConsumers, a.MaxRemovals, allowed)
		return fmt.Errorf("%w: %s", ErrRefused, res.Refused)
	}
	now := a.now()
	var errs []error
	for _, c := range orphans {
		info, err := a.Placement.Consumer(ctx, c)
		if err == nil && len(info.Providers) > 0 {
			if fresh, why := a.fresh(c, info, now); fresh {
				res.Fresh = append(res.Fresh, FreshConsumer{Consumer: c, Why: "changed since it was read: " + why})
				continue
			}
			err = a.Placement.DeleteConsumer(ctx, c)
		}
		if err != nil {
			if res.Failed == nil {
				res.Failed = map[string]string{}
			}
			res.Failed[c] = err.Error()
			errs = append(errs, err)
			continue
		}
		if len(info.Providers) > 0 {
			res.Deleted = append(res.Deleted, c)
			a.log().Info("orphaned allocations deleted", zap.String("consumer", c), zap.String("held", describeHeld(info.Providers)))
		}
	}
	return errors.Join(errs...)
}

func (a *Auditor) log() *zap.Logger {
	if a.Logger == nil {
		return zap.NewNop()
	}
	return a.Logger
}
