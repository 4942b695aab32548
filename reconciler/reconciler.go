package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// Options configure a Reconciler.
type Options struct {
	// Placement is required.
	Placement Placement
	// Nova is required for the aggregates job; without it that job is
	// not run and stamping only considers COMPUTE_NODE roots.
	Nova NovaSource
	// State remembers ownership and service records; nil keeps them in
	// memory only.
	State *StateFile
	// Jobs maps job names (JobNames) to cron schedules; a job that is
	// absent, or lacks its prerequisite (the aggregates job without
	// Nova), is not run; an unknown name is an error (ErrUnknownJob).
	Jobs map[string]string
	// RunTimeout bounds each run (0: no bound).
	RunTimeout time.Duration
	// GateRequired is the compute version that opens the gate
	// (0: MinComputeVersionOwnerTrait).
	GateRequired int
	// GateOverride is GateAuto (or empty), GateOpen or GateClosed; an
	// override recorded in the state file by `gate set` wins over it.
	GateOverride string
	// Computes lists Nova's nova-compute services for the gate (the
	// cell databases); nil uses Nova when it can list them (os-services).
	Computes ComputeSource
	// MaxStaleness is how long the last compute list may stay in use
	// after reading it fails (an unreadable cell); 0 closes the gate at
	// the first failure.
	MaxStaleness time.Duration
	// Services are operator-set records that replace heartbeat records of
	// the same host and binary (e.g. a decommissioned compute, deleted).
	Services    []ServiceRecord
	Concurrency int
	Retry       backoff.Policy
	// MaxRemovals bounds the associations one aggregates run may remove
	// (nil: DefaultMaxRemovals).
	MaxRemovals *removallimit.Limit
	// JobOptions are each job's own options by job name, of the type its
	// file declares (*AuditOptions for JobAudit), as OpenJobOptions
	// builds them; a job that needs them cannot run without.
	JobOptions map[string]any
	// Token, when set, is required on the local endpoint as
	// "X-Auth-Token" or "Authorization: Bearer".
	Token string
	// Leader, when set, tells whether this replica is the one of several
	// sharing a database that runs the jobs (package internal/leader);
	// Replica names this replica in the job listing. A job asked for on
	// the endpoint runs on any replica.
	Leader  func() bool
	Replica string
	// Shared, when set, shares heartbeats with the other replicas.
	Shared     SharedRecords
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	Now        func() time.Time
}

// Reconciler owns the jobs, the service records and the version gate.
// It is safe for concurrent use.
type Reconciler struct {
	opts  Options
	log   *zap.Logger
	m     *reconcilerMetrics
	state *StateFile
	run   *runner
	aggs  *AggregateSync
	stamp *OwnerStamp

	// kick asks the loop for a stamping run when the gate opens.
	kick chan struct{}

	gateMu   sync.Mutex
	gate     GateState
	computes gateComputes
	// armed: the last stamping run since the gate opened left no
	// nova-owned provider without OWNER_NOVA; only then does the
	// pre-filter apply, so opening never empties a candidate list.
	armed       bool
	openedAt    time.Time
	prefilterAt time.Time
	// unreadable are the cells the last failed read could not read.
	unreadable []string
}

// gateComputes is the last compute list read from Nova.
type gateComputes struct {
	list   []novaclient.ComputeService
	listed bool
	readAt time.Time
	err    string
	// unchecked is why the configured cells may not be all of Nova's
	// (novaclient.UncheckedCellsError), "" otherwise.
	unchecked string
}

// failed reports whether the last read failed and the list it left is
// too old to decide on. The clock is read only when staleness is allowed.
func (g gateComputes) failed(now func() time.Time, maxStale time.Duration) bool {
	return g.err != "" && (maxStale <= 0 || !g.listed || now().Sub(g.readAt) > maxStale)
}

// New validates opts and builds a Reconciler.
func New(opts Options) (*Reconciler, error) {
	return newReconciler(opts, jobKinds())
}

// newReconciler is New with the jobs it can run.
func newReconciler(opts Options, kinds []jobKind) (*Reconciler, error) {
	if opts.Placement == nil {
		return nil, errors.New("reconciler: a Placement client is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	opts.Registerer = metrics.Private(opts.Registerer)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.GateRequired == 0 {
		opts.GateRequired = MinComputeVersionOwnerTrait
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Retry.Attempts <= 0 {
		opts.Retry = DefaultRetry()
	}
	switch opts.GateOverride {
	case "", GateAuto, GateOpen, GateClosed:
	default:
		return nil, fmt.Errorf("reconciler: gate override %q (want auto, open or closed)", opts.GateOverride)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("reconciler: register metrics: %w", err)
	}
	state := opts.State
	if state == nil {
		state, _ = OpenStateFile("")
	}
	if opts.Computes == nil {
		if cs, ok := opts.Nova.(ComputeSource); ok {
			opts.Computes = cs
		}
	}
	r := &Reconciler{opts: opts, log: opts.Logger, m: m, state: state, kick: make(chan struct{}, 1)}
	r.run = &runner{byName: map[string]*job{}, timeout: opts.RunTimeout, log: opts.Logger, m: m, now: opts.Now, leader: opts.Leader}
	r.aggs = &AggregateSync{Nova: opts.Nova, Placement: opts.Placement, State: state, Logger: opts.Logger.Named("aggregates"),
		Concurrency: opts.Concurrency, Retry: opts.Retry, MaxRemovals: opts.MaxRemovals,
		OnRefuse: func(reason string) { m.refused.WithLabelValues(reason).Inc() }}
	r.stamp = &OwnerStamp{Placement: opts.Placement, Nova: opts.Nova, Gate: r.Gate, Logger: opts.Logger.Named(JobOwnerTraits),
		Concurrency: opts.Concurrency, Retry: opts.Retry}
	if err := r.addJobs(kinds, opts.Jobs); err != nil {
		return nil, fmt.Errorf("reconciler: %w", err)
	}
	r.refreshGate()
	return r, nil
}

// Run runs each configured job once, then on its schedule, until ctx
// ends. It returns after in-flight runs have finished.
func (r *Reconciler) Run(ctx context.Context) error {
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		r.stampOnOpen(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		r.followShared(ctx)
	}()
	err := r.run.loop(ctx)
	<-done
	<-done
	return err
}

// stampOnOpen runs the stamping job as soon as the gate opens, so that
// the pre-filter is not left waiting for the job's schedule.
func (r *Reconciler) stampOnOpen(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			if r.run.byName[JobOwnerTraits] != nil && r.run.leads() {
				_, _ = r.run.run(ctx, JobOwnerTraits, TriggerGate)
			}
		}
	}
}

// RunJob runs one job now, unless it is already running (ErrJobBusy).
func (r *Reconciler) RunJob(ctx context.Context, name string) (RunRecord, error) {
	return r.run.run(ctx, name, TriggerDemand)
}

// JobStatus is a job's schedule and recent runs.
type JobStatus struct {
	Name     string      `json:"name"`
	Schedule string      `json:"schedule"`
	Runs     []RunRecord `json:"runs"`
}

// Leadership is what the job listing says about the replicas.
type Leadership struct {
	// Replicated is false for a lone process, which always runs the jobs.
	Replicated bool   `json:"replicated"`
	Leader     bool   `json:"leader"`
	Replica    string `json:"replica,omitempty"`
}

// Leadership reports whether this replica runs the jobs now.
func (r *Reconciler) Leadership() Leadership {
	return Leadership{Replicated: r.opts.Leader != nil, Leader: r.run.leads(), Replica: r.opts.Replica}
}

// Jobs returns every configured job with its recent runs.
func (r *Reconciler) Jobs() []JobStatus {
	out := make([]JobStatus, 0, len(r.run.jobs))
	for _, j := range r.run.jobs {
		h, _ := r.run.history(j.name)
		out = append(out, JobStatus{Name: j.name, Schedule: j.schedule, Runs: h})
	}
	return out
}

// SyncAggregates runs the aggregate mirroring once outside the job
// schedule (the sync-aggregates command) and returns its full result.
func (r *Reconciler) SyncAggregates(ctx context.Context, flags RunFlags) (*AggregateResult, error) {
	if r.opts.Nova == nil {
		return nil, errors.New("no Nova source configured")
	}
	return r.aggs.RunWith(ctx, flags)
}

// heartbeat stores rec; only an authenticated record can give a listed
// compute its version.
func (r *Reconciler) heartbeat(rec ServiceRecord, authenticated bool) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	rec.Authenticated = authenticated
	if rec.UpdatedAt.IsZero() {
		rec.UpdatedAt = r.opts.Now().UTC()
	}
	r.m.heartbeats.Inc()
	if err := r.state.PutService(rec); err != nil {
		return err
	}
	r.refreshGate()
	// Kept here already: a database outage costs the other replicas
	// this heartbeat, not the agent its answer.
	if err := r.share(rec); err != nil {
		r.log.Warn("heartbeat not shared", zap.Error(err))
	}
	return nil
}

// Services returns the records the gate decides from: heartbeats with
// the operator's configured records on top.
func (r *Reconciler) Services() []ServiceRecord {
	return mergeRecords(r.state.Services(), r.opts.Services)
}

func (r *Reconciler) refreshGate() {
	override, setAt := r.override()
	r.gateMu.Lock()
	g := EvaluateGate(GateInput{Computes: r.computes.list, Listed: r.computes.listed, ListError: r.computes.err,
		ListFailed: r.computes.failed(r.opts.Now, r.opts.MaxStaleness), CellsUnchecked: r.computes.unchecked,
		Records: r.Services(), Required: r.opts.GateRequired, Override: override})
	g.OverrideSetAt = setAt
	changed := g.Open != r.gate.Open || r.gate.Required == 0
	opening := g.Open && !r.gate.Open
	if !g.Open {
		r.armed = false // closing turns the pre-filter off at once
	}
	if opening {
		r.openedAt = r.opts.Now()
	}
	g.PrefilterOn = g.Open && r.armed
	if g.Open {
		g.OpenedAt = r.openedAt
	}
	if g.PrefilterOn {
		g.PrefilterAt = r.prefilterAt
	}
	r.gate = g
	r.gateMu.Unlock()
	r.m.observeGate(g)
	if changed {
		r.log.Info("OWNER_NOVA version gate", zap.Bool("open", g.Open), zap.String("reason", g.Reason))
	}
	if opening {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// override is the effective override: the one `gate set` recorded, else
// the configured one.
func (r *Reconciler) override() (string, time.Time) {
	if o := r.state.GateOverride(); o != nil {
		return o.Override, o.SetAt
	}
	return r.opts.GateOverride, time.Time{}
}

// SetGateOverride records an operator override (auto, open or closed)
// in the state file and re-evaluates the gate.
func (r *Reconciler) SetGateOverride(o string) error {
	switch o {
	case GateAuto, GateOpen, GateClosed:
	default:
		return fmt.Errorf("gate override %q (want auto, open or closed)", o)
	}
	if err := r.state.SetGateOverride(GateOverrideRecord{Override: o, SetAt: r.opts.Now().UTC()}); err != nil {
		return err
	}
	r.log.Info("OWNER_NOVA gate override set", zap.String("override", o))
	r.refreshGate()
	return nil
}

// RefreshComputes reads Nova's compute list and re-evaluates the gate.
// A failure closes the gate (after MaxStaleness, when set), is logged
// with the cells it could not read and counted, and is returned.
func (r *Reconciler) RefreshComputes(ctx context.Context) error {
	if r.opts.Computes == nil {
		r.gateMu.Lock()
		r.computes.err = "no source of Nova's compute list configured (reconciler.nova.cell_databases, endpoint, cloud or a file with services)"
		r.gateMu.Unlock()
		r.refreshGate()
		return nil
	}
	list, err := r.opts.Computes.Computes(ctx)
	r.gateMu.Lock()
	if err == nil {
		r.computes = gateComputes{list: list, listed: true}
		if r.opts.MaxStaleness > 0 {
			r.computes.readAt = r.opts.Now()
		}
	} else {
		r.computes.err, r.computes.unchecked = err.Error(), uncheckedReason(err)
	}
	r.gateMu.Unlock()
	r.refreshGate()
	r.observeList(err)
	return err
}

// observeList logs and counts a failed read, naming each unreadable
// cell, and clears the cells read again.
func (r *Reconciler) observeList(err error) {
	var cells *novaclient.UnreadableCellsError
	var now []string
	if errors.As(err, &cells) {
		now = cells.Names()
	}
	r.gateMu.Lock()
	before := r.unreadable
	if err == nil || now != nil {
		r.unreadable = now
	}
	r.gateMu.Unlock()
	if err == nil {
		for _, c := range before {
			r.m.cellUnreadable.WithLabelValues(c).Set(0)
			r.log.Info("Nova cell database readable again", zap.String("cell", c))
		}
		return
	}
	r.m.listErrors.Inc()
	if uncheckedReason(err) != "" {
		r.log.Error("OWNER_NOVA gate kept closed: the configured cell databases may not be all of Nova's cells", zap.Error(err))
		return
	}
	if cells == nil {
		r.log.Warn("Nova's compute list not read", zap.Bool("gate_open", r.Gate().Open), zap.Error(err))
		return
	}
	open := r.Gate().Open // open only within gate.max_staleness
	for _, f := range cells.Failed {
		r.m.cellUnreadable.WithLabelValues(f.Cell).Set(1)
		r.log.Error("Nova cell database not readable", zap.String("cell", f.Cell), zap.Bool("gate_open", open), zap.Error(f.Err))
	}
	for _, c := range before {
		if !slices.Contains(now, c) {
			r.m.cellUnreadable.WithLabelValues(c).Set(0)
		}
	}
}

// stamped arms the pre-filter after a stamping run that left nothing
// unstamped while the gate was open.
func (r *Reconciler) stamped(res *StampResult) {
	if res == nil || !res.Gate.Open || len(res.Failed) > 0 {
		return
	}
	r.gateMu.Lock()
	if !r.gate.Open || r.armed {
		r.gateMu.Unlock()
		return
	}
	r.prefilterAt = r.opts.Now()
	r.armed, r.gate.PrefilterOn, r.gate.PrefilterAt = true, true, r.prefilterAt
	window := r.prefilterAt.Sub(r.openedAt)
	r.gateMu.Unlock()
	r.log.Info("OWNER_NOVA pre-filter on: nova-owned providers stamped", zap.Int("stamped", len(res.Stamped)),
		zap.Duration("since_gate_opened", window))
}

// Gate returns the version gate's current state.
func (r *Reconciler) Gate() GateState {
	r.gateMu.Lock()
	defer r.gateMu.Unlock()
	return r.gate
}

// OwnerNovaGateOpen reports whether the pre-filter may apply: the gate
// is open and the stamping that followed its opening is done. The
// Placement server's pre-filter asks this on every allocation candidates
// request.
func (r *Reconciler) OwnerNovaGateOpen() bool {
	return r.Gate().PrefilterOn
}
