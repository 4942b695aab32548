// Package agent keeps Placement in step with what drivers observe. Each
// pass, per driver: observe the desired provider tree, read the actual one
// from Placement, plan the whole pass (a pure function of the two: the
// providers to create, the traits, inventories and aggregates to set),
// then write only the differences with generations, re-reading,
// re-planning and retrying on 409 with jittered, bounded backoff. DryRun
// stops after the plan. A pass that could not finish is a failure, never
// a partial success. The agent talks to Placement only through
// placementclient, so it runs unchanged against OpenStack Placement.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// Defaults for Options.
const (
	DefaultInterval          = 10 * time.Second
	DefaultConcurrency       = 8
	DefaultConflictRetries   = 5
	DefaultBackoffBase       = time.Second
	DefaultListTreesMax      = 8
	DefaultHeartbeatInterval = time.Minute
	DefaultRefreshInterval   = time.Hour
	// DefaultServiceBinary is the binary the reconciler's version gate
	// counts: the agent reports for the host as nova-compute does.
	DefaultServiceBinary      = heartbeat.ComputeBinary
	maxConflictBackoffPerStep = 2 * time.Second
)

// Options configures an Agent.
type Options struct {
	// Placement is the client; required.
	Placement *placementclient.Client
	// Drivers are synced in order each pass; at least one.
	Drivers []drivers.Driver
	// Host names this agent in its service record.
	Host string
	// Version is reported in the service record.
	Version string
	// Interval between passes (default 10 s). A state change reaches
	// Placement within one interval.
	Interval time.Duration
	// Concurrency is how many provider trees are read or written at once
	// (the first pass over a fleet, a large change).
	Concurrency int
	// RefreshInterval is how often each provider is read in full even
	// though its generation has not moved (nova's
	// resource_provider_association_refresh); each provider has its own
	// phase, so a fleet's re-reads spread over the period: about
	// 2 x providers / RefreshInterval reads. 0 means
	// DefaultRefreshInterval, a negative value never.
	RefreshInterval time.Duration
	// ConflictRetries bounds re-read-and-retry rounds per provider on 409.
	ConflictRetries int
	// BackoffBase is the first wait after a failed pass (doubling, with
	// jitter, up to Interval) and the unit of conflict backoff.
	BackoffBase time.Duration
	// ListTreesMax: a driver whose providers form at most this many trees
	// is listed with one in_tree query per tree each pass; one of more
	// trees (bare-metal nodes) is not listed, and its cached states are
	// trusted (see listActual).
	ListTreesMax int
	// ServiceURL, when set, receives the ServiceRecord as a JSON POST
	// every HeartbeatInterval, with ServiceToken as X-Auth-Token.
	ServiceURL        string
	ServiceToken      string
	HeartbeatInterval time.Duration
	// ServiceBinary is the record's binary (default nova-compute).
	ServiceBinary string
	// NovaComputeVersion is the service version of the nova-compute on
	// this host, reported in the record (0: unknown).
	NovaComputeVersion int
	// StateFile, when set, keeps the providers this agent reported across
	// restarts, so that one whose node vanished while it was down is
	// still retired (see drivers.Retiring).
	StateFile string
	// MaxRetirements bounds the vanished providers one pass retires; nil
	// means DefaultMaxRetirements.
	MaxRetirements *removallimit.Limit
	// Logger; nil means no logging.
	Logger *zap.Logger
	// Registerer for metrics; nil means a private registry.
	Registerer prometheus.Registerer
	// OnPass, when set, is called after every pass with its results (for
	// status pages and tests).
	OnPass func([]Result)
}

// Agent syncs drivers' provider trees into Placement. Its methods are safe
// for concurrent use; passes never overlap.
type Agent struct {
	opts    Options
	pc      *placementclient.Client
	log     *zap.Logger
	metrics *agentMetrics
	resync  chan struct{}

	passMu sync.Mutex // one pass (or programming step) at a time

	mu    sync.Mutex
	cache map[string]actual // provider uuid -> last read/written
	// cacheDirty: the cache changed since it was last saved.
	cacheDirty bool
	// observed is each driver's providers in its last pass, so that the
	// cache drops those that leave a tree.
	observed  map[string]map[string]bool
	owned     map[string][]string // provider uuid -> traits we set
	parents   map[string]string   // external parent name -> uuid
	ensuredRC map[string]bool
	ensuredTr map[string]bool
	reported  *reportedSet
	// deferred are the providers left to another service (see
	// drivers.Provider.DeferTo), so that each change is logged once.
	deferred map[string]bool
	// held are the vanished providers reserved in full because their
	// retirement was refused, with when that was last made sure of.
	held   map[string]time.Time
	last   []Result
	lastOK time.Time

	fallbackLogged atomic.Bool
	lastHeartbeat  time.Time // when the service record was last posted
}

// positiveOr is v, or def when v is not positive (unset).
func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// New validates opts and builds an Agent.
func New(opts Options) (*Agent, error) {
	if opts.Placement == nil {
		return nil, errors.New("agent: a placement client is required")
	}
	if len(opts.Drivers) == 0 {
		return nil, errors.New("agent: at least one driver is required")
	}
	opts.Interval = positiveOr(opts.Interval, DefaultInterval)
	opts.Concurrency = positiveOr(opts.Concurrency, DefaultConcurrency)
	opts.ConflictRetries = positiveOr(opts.ConflictRetries, DefaultConflictRetries)
	opts.BackoffBase = positiveOr(opts.BackoffBase, DefaultBackoffBase)
	opts.ListTreesMax = positiveOr(opts.ListTreesMax, DefaultListTreesMax)
	opts.HeartbeatInterval = positiveOr(opts.HeartbeatInterval, DefaultHeartbeatInterval)
	if opts.RefreshInterval == 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	opts.ServiceBinary = cmp.Or(opts.ServiceBinary, DefaultServiceBinary)
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	opts.Registerer = metrics.Private(opts.Registerer)
	if opts.MaxRetirements == nil {
		l := DefaultMaxRetirements()
		opts.MaxRetirements = &l
	}
	reported, err := loadReported(opts.StateFile)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("agent: register metrics: %w", err)
	}
	a := &Agent{
		opts: opts, pc: opts.Placement, log: opts.Logger.Named("agent"), metrics: m,
		resync: make(chan struct{}, 1),
		cache:  map[string]actual{}, owned: map[string][]string{}, parents: map[string]string{},
		observed:  map[string]map[string]bool{},
		ensuredRC: map[string]bool{}, ensuredTr: map[string]bool{}, reported: reported, held: map[string]time.Time{},
		deferred: map[string]bool{},
	}
	a.restoreCache(reported.providers)
	return a, nil
}

// Result is one driver's pass.
type Result struct {
	Driver    string
	Providers int
	Created   int
	Writes    int
	Conflicts int
	// Unavailable counts held-back inventories by reason.
	Unavailable map[string]int
	// HeldBack maps each provider of the driver's tree with a held-back
	// inventory to its reason (the first class's, by name), as observed.
	HeldBack map[string]string
	// Deferred counts the providers left to the service that reports
	// them (drivers.Provider.DeferTo): nothing written, none counted in
	// Unavailable.
	Deferred int
	// FallbackDeleted counts unavailable inventories deleted because the
	// server is older than 1.26.
	FallbackDeleted int
	// Reread counts providers read afresh, by reason; CacheHits those
	// taken from the cache.
	Reread    map[string]int
	CacheHits int
	// Retired counts vanished providers deleted, Retiring those kept
	// (reserved in full) while allocations remain; RetireRefused is why
	// vanished providers were not retired (RetireRefused*), "" if not.
	// Writes include the retirements' deletions and reservations.
	Retired, Retiring int
	RetireRefused     string
	// Held counts vanished providers reserved in full because their
	// retirement was refused (max_retirements).
	Held int
	// Requests are the HTTP requests the pass sent to Placement.
	Requests placementclient.Requests
	Duration time.Duration
	Err      error
}

// Run passes every Interval (or at once on Resync) until ctx ends. After a
// failed pass it waits a jittered, doubling backoff (capped at Interval)
// instead. It returns nil when ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	failures := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-a.resync:
		}
		wait := a.opts.Interval
		if err := a.SyncOnce(ctx); err != nil && ctx.Err() == nil {
			failures++
			wait = a.opts.passRetry().Delay(failures)
			a.log.Warn("sync pass failed; backing off", zap.Error(err), zap.Int("failures", failures), zap.Duration("retry_in", wait))
		} else {
			failures = 0
		}
		a.heartbeat(ctx)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// passRetry is the wait after failed passes: doubling from BackoffBase,
// at most Interval, jittered so that agents failing together spread out.
func (o Options) passRetry() backoff.Policy {
	return backoff.Policy{Base: o.BackoffBase, Cap: o.Interval}
}

// conflictRetry is the wait before re-reading after a conflict: a draw
// from [0, BackoffBase/10·n], at most maxConflictBackoffPerStep.
func (o Options) conflictRetry() backoff.Policy {
	return backoff.Policy{Base: o.BackoffBase / 10, Cap: maxConflictBackoffPerStep, Growth: backoff.Linear,
		Jitter: backoff.FullJitter, Attempts: o.ConflictRetries + 1}
}

// Resync asks Run for a pass now (coalesced with one already asked for).
func (a *Agent) Resync() {
	select {
	case a.resync <- struct{}{}:
	default:
	}
}

// SyncOnce runs one pass over every driver and returns the joined errors
// of the drivers that did not fully sync.
func (a *Agent) SyncOnce(ctx context.Context) error {
	a.passMu.Lock()
	defer a.passMu.Unlock()
	results := make([]Result, 0, len(a.opts.Drivers))
	var errs []error
	for _, d := range a.opts.Drivers {
		r := a.syncDriver(ctx, d)
		results = append(results, r)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name(), r.Err))
		}
	}
	a.pruneRestored()
	if err := a.saveCache(); err != nil {
		errs = append(errs, err)
	}
	a.mu.Lock()
	a.last = results
	if len(errs) == 0 {
		a.lastOK = time.Now()
	}
	a.mu.Unlock()
	if a.opts.OnPass != nil {
		a.opts.OnPass(results)
	}
	return errors.Join(errs...)
}

// LastResults returns the last pass's results and the time of the last
// fully successful pass.
func (a *Agent) LastResults() ([]Result, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Result(nil), a.last...), a.lastOK
}
