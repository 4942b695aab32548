package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
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
	// Jobs maps job names (JobAggregates, JobOwnerTraits) to cron
	// schedules; a job that is absent is not run, an unknown name is an
	// error (ErrUnknownJob).
	Jobs map[string]string
	// RunTimeout bounds each run (0: no bound).
	RunTimeout time.Duration
	// GateRequired is the compute version that opens the gate
	// (0: MinComputeVersionOwnerTrait).
	GateRequired int
	// GateOverride is GateAuto (or empty), GateOpen or GateClosed.
	GateOverride string
	// Services are operator-set records that replace heartbeat records of
	// the same host and binary (e.g. a decommissioned compute, deleted).
	Services    []ServiceRecord
	Concurrency int
	Retry       Retry
	// MaxRemovals bounds the associations one aggregates run may remove
	// (nil: DefaultMaxRemovals).
	MaxRemovals *RemovalLimit
	// Token, when set, is required on the local endpoint as
	// "X-Auth-Token" or "Authorization: Bearer".
	Token      string
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	Now        func() time.Time
}

// Reconciler owns the jobs, the service records and the version gate.
// It is safe for concurrent use.
type Reconciler struct {
	opts  Options
	log   *zap.Logger
	m     *metrics
	state *StateFile
	run   *runner
	aggs  *AggregateSync
	stamp *OwnerStamp

	gateMu sync.Mutex
	gate   GateState
}

// New validates opts and builds a Reconciler.
func New(opts Options) (*Reconciler, error) {
	if opts.Placement == nil {
		return nil, errors.New("reconciler: a Placement client is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
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
		opts.Retry = DefaultRetry
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
	r := &Reconciler{opts: opts, log: opts.Logger, m: m, state: state}
	r.run = &runner{byName: map[string]*job{}, timeout: opts.RunTimeout, log: opts.Logger, m: m, now: opts.Now}
	r.aggs = &AggregateSync{Nova: opts.Nova, Placement: opts.Placement, State: state, Logger: opts.Logger.Named("aggregates"),
		Concurrency: opts.Concurrency, Retry: opts.Retry, MaxRemovals: opts.MaxRemovals,
		OnRefuse: func(reason string) { m.refused.WithLabelValues(reason).Inc() }}
	r.stamp = &OwnerStamp{Placement: opts.Placement, Nova: opts.Nova, Gate: r.Gate, Logger: opts.Logger.Named(JobOwnerTraits),
		Concurrency: opts.Concurrency, Retry: opts.Retry}
	if err := r.addJobs(opts.Jobs); err != nil {
		return nil, fmt.Errorf("reconciler: %w", err)
	}
	r.refreshGate()
	return r, nil
}

// Run runs each configured job once, then on its schedule, until ctx
// ends. It returns after in-flight runs have finished.
func (r *Reconciler) Run(ctx context.Context) error {
	return r.run.loop(ctx)
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

// Heartbeat stores a service record and re-evaluates the gate.
func (r *Reconciler) Heartbeat(rec ServiceRecord) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	if rec.UpdatedAt.IsZero() {
		rec.UpdatedAt = r.opts.Now().UTC()
	}
	r.m.heartbeats.Inc()
	if err := r.state.PutService(rec); err != nil {
		return err
	}
	r.refreshGate()
	return nil
}

// Services returns the records the gate decides from: heartbeats with
// the operator's configured records on top.
func (r *Reconciler) Services() []ServiceRecord {
	return mergeRecords(r.state.Services(), r.opts.Services)
}

func (r *Reconciler) refreshGate() {
	g := EvaluateGate(GateInput{Records: r.Services(), Required: r.opts.GateRequired, Override: r.opts.GateOverride})
	r.gateMu.Lock()
	changed := g.Open != r.gate.Open || r.gate.Required == 0
	r.gate = g
	r.gateMu.Unlock()
	r.m.observeGate(g)
	if changed {
		r.log.Info("OWNER_NOVA version gate", zap.Bool("open", g.Open), zap.String("reason", g.Reason))
	}
}

// Gate returns the version gate's current state.
func (r *Reconciler) Gate() GateState {
	r.gateMu.Lock()
	defer r.gateMu.Unlock()
	return r.gate
}

// OwnerNovaGateOpen reports whether the gate is open; the Placement
// server's pre-filter asks this on every allocation candidates request.
func (r *Reconciler) OwnerNovaGateOpen() bool {
	return r.Gate().Open
}
