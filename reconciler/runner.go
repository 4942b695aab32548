package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
)

// canonicalJob returns the job an older spelling stands for: the
// stamping job was called owner-traits while its configuration key was
// owner_traits, so both reach it.
func canonicalJob(name string) string {
	if name == "owner-traits" {
		return JobOwnerTraits
	}
	return name
}

// Run triggers.
const (
	TriggerStart    = "start"
	TriggerSchedule = "schedule"
	TriggerDemand   = "demand"
	TriggerGate     = "gate"   // the gate opened: stamp before the pre-filter applies
	TriggerLeader   = "leader" // this replica took the leadership over: every job runs once
)

// Run results.
const (
	ResultOK      = "ok"
	ResultError   = "error"
	ResultSkipped = "skipped" // another run of the job was in progress
)

// ErrJobBusy is returned for an on-demand run while the job runs.
var ErrJobBusy = errors.New("job is already running")

// ErrUnknownJob is returned for a job name that is not configured.
var ErrUnknownJob = errors.New("unknown job")

// RunRecord describes one run of a job.
type RunRecord struct {
	Job      string        `json:"job"`
	Trigger  string        `json:"trigger"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_ns"`
	Result   string        `json:"result"`
	Error    string        `json:"error,omitempty"`
	// Changes are writes made (associations added or removed, traits
	// stamped); Drift is the differences found before writing.
	Changes   int `json:"changes"`
	Drift     int `json:"drift"`
	Conflicts int `json:"conflicts"`
	GiveUps   int `json:"give_ups"`
	// HostsWithoutProvider are Nova hosts that could not be mirrored.
	HostsWithoutProvider []string `json:"hosts_without_provider,omitempty"`
	// Detail is a short human summary.
	Detail string `json:"detail,omitempty"`
}

// outcome is what a job function reports besides its error.
type outcome struct {
	changes, drift, conflicts, giveUps int
	unmapped                           []string
	detail                             string
	// logFields are the job's own fields on its "job run" log line.
	logFields []zap.Field
}

// jobFunc is one job's work.
type jobFunc func(ctx context.Context) (outcome, error)

// job is a scheduled job with its run lock and history.
type job struct {
	name     string
	schedule string
	fn       jobFunc
	// reportsUnmapped: runs set the hosts_without_provider gauge.
	reportsUnmapped bool
	// running is held for the whole of a run: TryLock makes scheduled and
	// on-demand runs skip rather than overlap (cron's SkipIfStillRunning
	// cannot see on-demand runs).
	running sync.Mutex

	mu      sync.Mutex
	history []RunRecord // newest last, at most historySize
}

const historySize = 50

// cronParser accepts five fields, or six with leading seconds, and
// descriptors such as @every 5m.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule checks a cron expression as the runner reads it.
func ParseSchedule(spec string) error {
	_, err := cronParser.Parse(spec)
	return err
}

// runner runs jobs; it is safe for concurrent use.
type runner struct {
	jobs    []*job
	byName  map[string]*job
	timeout time.Duration
	log     *zap.Logger
	m       *reconcilerMetrics
	now     func() time.Time
	// leader, when set, says whether this replica leads: only the leader
	// runs jobs on schedule, at start and when the gate opens.
	leader func() bool
}

// leaderCheck is how often a standby replica looks whether it leads.
const leaderCheck = time.Second

// leads reports whether this replica runs the jobs that are not asked for.
func (r *runner) leads() bool { return r.leader == nil || r.leader() }

func (r *runner) add(name, schedule string, fn jobFunc, reportsUnmapped bool) error {
	if _, err := cronParser.Parse(schedule); err != nil {
		return fmt.Errorf("job %s: schedule %q: %w", name, schedule, err)
	}
	j := &job{name: name, schedule: schedule, fn: fn, reportsUnmapped: reportsUnmapped}
	r.jobs = append(r.jobs, j)
	r.byName[name] = j
	return nil
}

// run runs one job now unless it is already running, records the run
// and returns the record (Result skipped when it was busy).
func (r *runner) run(ctx context.Context, name, trigger string) (RunRecord, error) {
	name = canonicalJob(name)
	j, ok := r.byName[name]
	if !ok {
		return RunRecord{}, fmt.Errorf("%w %q", ErrUnknownJob, name)
	}
	rec := RunRecord{Job: name, Trigger: trigger, Start: r.now()}
	if !j.running.TryLock() {
		rec.Result = ResultSkipped
		r.m.runs.WithLabelValues(name, ResultSkipped).Inc()
		r.log.Info("job skipped: already running", zap.String("job", name), zap.String("trigger", trigger))
		return rec, ErrJobBusy
	}
	defer j.running.Unlock()
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	out, err := j.fn(ctx)
	rec.Duration = r.now().Sub(rec.Start)
	rec.Changes, rec.Drift, rec.Conflicts, rec.GiveUps = out.changes, out.drift, out.conflicts, out.giveUps
	rec.HostsWithoutProvider, rec.Detail = out.unmapped, out.detail
	rec.Result = ResultOK
	if err != nil {
		rec.Result, rec.Error = ResultError, err.Error()
	}
	r.record(j, rec, out.logFields...)
	return rec, err
}

func (r *runner) record(j *job, rec RunRecord, extra ...zap.Field) {
	j.mu.Lock()
	j.history = append(j.history, rec)
	if len(j.history) > historySize {
		j.history = j.history[len(j.history)-historySize:]
	}
	j.mu.Unlock()

	r.m.runs.WithLabelValues(rec.Job, rec.Result).Inc()
	r.m.duration.WithLabelValues(rec.Job).Observe(rec.Duration.Seconds())
	r.m.changes.WithLabelValues(rec.Job).Add(float64(rec.Changes))
	r.m.drift.WithLabelValues(rec.Job).Set(float64(rec.Drift))
	r.m.conflicts.WithLabelValues(rec.Job).Add(float64(rec.Conflicts))
	r.m.giveUps.WithLabelValues(rec.Job).Add(float64(rec.GiveUps))
	r.m.lastRun.WithLabelValues(rec.Job).Set(float64(rec.Start.UnixNano()) / 1e9)
	if rec.Result == ResultOK {
		r.m.lastSuccess.WithLabelValues(rec.Job).Set(float64(rec.Start.Add(rec.Duration).UnixNano()) / 1e9)
	}
	if j.reportsUnmapped && rec.Result != ResultSkipped {
		r.m.unmapped.WithLabelValues(rec.Job).Set(float64(len(rec.HostsWithoutProvider)))
	}
	fields := []zap.Field{zap.String("job", rec.Job), zap.String("trigger", rec.Trigger), zap.String("result", rec.Result),
		zap.Duration("duration", rec.Duration), zap.Int("changes", rec.Changes), zap.Int("drift", rec.Drift),
		zap.Int("conflicts", rec.Conflicts), zap.Int("give_ups", rec.GiveUps), zap.Int("hosts_without_provider", len(rec.HostsWithoutProvider))}
	fields = append(fields, extra...)
	if rec.Result == ResultError {
		r.log.Warn("job run failed", append(fields, zap.String("error", rec.Error))...)
		return
	}
	r.log.Info("job run", fields...)
}

// loop runs every job once, then on its schedule until ctx ends; it
// returns after the last run has finished. With several replicas only
// the leader does: a replica that takes the leadership over runs every
// job once at once (trigger leader), then on schedule.
func (r *runner) loop(ctx context.Context) error {
	c := cron.New(cron.WithParser(cronParser), cron.WithLogger(cron.DiscardLogger))
	for _, j := range r.jobs {
		sched, err := cronParser.Parse(j.schedule)
		if err != nil {
			return err
		}
		c.Schedule(sched, cron.FuncJob(func() {
			if r.leads() {
				_, _ = r.run(ctx, j.name, TriggerSchedule)
			}
		}))
	}
	// The start runs go first, in order (aggregates before stamping), so
	// that the first scheduled tick does not race them.
	led := r.leads()
	if led {
		r.runAll(ctx, TriggerStart)
	}
	c.Start()
	r.followLeadership(ctx, led)
	<-c.Stop().Done()
	return nil
}

// runAll runs every job once, in order.
func (r *runner) runAll(ctx context.Context, trigger string) {
	for _, j := range r.jobs {
		if ctx.Err() != nil {
			break
		}
		_, _ = r.run(ctx, j.name, trigger)
	}
}

// followLeadership waits for ctx to end, running every job when this
// replica becomes the leader.
func (r *runner) followLeadership(ctx context.Context, led bool) {
	if r.leader == nil {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(leaderCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := r.leads()
			if now && !led {
				r.runAll(ctx, TriggerLeader)
			}
			led = now
		}
	}
}

// history returns a job's recent runs, oldest first.
func (r *runner) history(name string) ([]RunRecord, error) {
	j, ok := r.byName[canonicalJob(name)]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, name)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]RunRecord(nil), j.history...), nil
}
