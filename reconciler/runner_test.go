package reconciler

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// fakeClock returns base, base+step, base+2*step, ... on successive
// calls, so that a run's start and duration are known exactly.
type fakeClock struct {
	mu   sync.Mutex
	next time.Time
	step time.Duration
}

func newFakeClock(step time.Duration) *fakeClock {
	return &fakeClock{next: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: step}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.next
	c.next = c.next.Add(c.step)
	return t
}

// holdListings makes the proxy hold every GET /resource_providers (the
// first Placement read of both jobs) until release is closed or the
// client abandons the request. It reports each held request on entered,
// each abandoned one on abandoned, and the most requests ever held at
// once.
type holdListings struct {
	entered   chan string
	abandoned chan string
	release   chan struct{}
	once      sync.Once
	inFlight  atomic.Int32
	maxFlight atomic.Int32
}

func holdProviderListings(t testing.TB, p *placementtest.Proxy) *holdListings {
	h := &holdListings{entered: make(chan string, 100), abandoned: make(chan string, 100), release: make(chan struct{})}
	p.SetBefore(func(r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/resource_providers" {
			return
		}
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for {
			m := h.maxFlight.Load()
			if n <= m || h.maxFlight.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case h.entered <- r.URL.RawQuery:
		default: // nobody is counting any more
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			h.abandoned <- r.URL.RawQuery
		}
	})
	// Never leave a proxy goroutine parked after the test.
	t.Cleanup(h.Release)
	return h
}

// Release lets held and future listings through.
func (h *holdListings) Release() { h.once.Do(func() { close(h.release) }) }

// waitEntered waits for a listing to be held.
func (h *holdListings) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no provider listing reached Placement within 30s")
	}
}

// waitFor polls cond until it holds or the deadline passes. The runner's
// schedule is cron on the wall clock, so some waits have no event to
// block on.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		<-tick.C
	}
}

// runnerFixture is a Reconciler over our server (behind the counting
// proxy) and the Nova double: hosts h1 and h2 with providers, ghost
// without one, all in aggregate agg.
type runnerFixture struct {
	e    *env
	r    *Reconciler
	reg  *prometheus.Registry
	logs *observer.ObservedLogs
	agg  string
	h1   string
	h2   string
}

func newRunnerFixture(t *testing.T, opts Options) *runnerFixture {
	t.Helper()
	e := newEnv(t, placementtest.Ours)
	f := &runnerFixture{e: e, agg: uuidN("a1a1a1a1", 1), h1: uuidN("b1b1b1b1", 1), h2: uuidN("b1b1b1b1", 2)}
	e.provider(t, f.h1, "h1", "", "COMPUTE_NODE")
	e.provider(t, f.h2, "h2", "", "COMPUTE_NODE")
	e.nova.set([]novaclient.Aggregate{{UUID: f.agg, Name: "agg", Hosts: []string{"h1", "h2", "ghost"}}}, []novaclient.ComputeNode{
		{UUID: f.h1, Hostname: "h1", Host: "h1"}, {UUID: f.h2, Hostname: "h2", Host: "h2"}, {UUID: uuidN("b1b1b1b1", 9), Hostname: "ghost", Host: "ghost"},
	})
	core, logs := observer.New(zapcore.DebugLevel)
	f.logs, f.reg = logs, prometheus.NewRegistry()
	opts.Placement, opts.Nova, opts.Logger, opts.Registerer, opts.Retry = e.pl, e.nova.source(), zap.New(core), f.reg, fastRetry
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// start runs the Reconciler's loop until the test ends, and checks it
// returns once its context is cancelled.
func (f *runnerFixture) start(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Run did not return within 30s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func (f *runnerFixture) history(t *testing.T, job string) []RunRecord {
	t.Helper()
	h, err := f.r.run.history(job)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (f *runnerFixture) runs(job, result string) float64 {
	return testutil.ToFloat64(f.r.m.runs.WithLabelValues(job, result))
}

// TestRunner_StartRunsAndRecords: each job runs once at start, in order,
// and each run is recorded with its start, duration, result, changes,
// drift and hosts without provider, in the history and the metrics.
func TestRunner_StartRunsAndRecords(t *testing.T) {
	t.Parallel()
	const step = 1500 * time.Millisecond
	clock := newFakeClock(step)
	f := newRunnerFixture(t, Options{Now: clock.Now, Jobs: map[string]string{JobAggregates: "@every 1h", JobOwnerTraits: "@every 1h"}})
	stop := f.start(t)
	waitFor(t, 30*time.Second, "both start runs", func() bool {
		return len(f.history(t, JobAggregates)) == 1 && len(f.history(t, JobOwnerTraits)) == 1
	})

	agg, own := f.history(t, JobAggregates)[0], f.history(t, JobOwnerTraits)[0]
	want := RunRecord{Job: JobAggregates, Trigger: TriggerStart, Start: agg.Start, Duration: step, Result: ResultOK,
		Changes: 2, Drift: 2, HostsWithoutProvider: []string{"ghost"}, Detail: "0 providers in sync, 2 written, 0 failed (read by-aggregate)"}
	if !equalRecords(agg, want) {
		t.Errorf("aggregates start run:\n got %+v\nwant %+v", agg, want)
	}
	if !own.Start.After(agg.Start) || own.Trigger != TriggerStart || own.Result != ResultOK || own.Duration != step || own.Changes != 0 ||
		!strings.HasPrefix(own.Detail, "gate closed: ") {
		t.Errorf("owner-traits start run = %+v (want after the aggregates run, ok, gate closed)", own)
	}
	if got := f.e.aggregates(t, f.h1); !slices.Equal(got, []string{f.agg}) {
		t.Errorf("h1 aggregates after the start run: %v", got)
	}
	if got := testutil.ToFloat64(f.r.m.unmapped.WithLabelValues(JobAggregates)); got != 1 {
		t.Errorf("hosts_without_provider gauge = %v, want 1", got)
	}
	if got := testutil.ToFloat64(f.r.m.changes.WithLabelValues(JobAggregates)); got != 2 {
		t.Errorf("changes_total = %v, want 2", got)
	}

	// On demand: recorded with its trigger; the second run finds no drift.
	rec, err := f.r.RunJob(context.Background(), JobAggregates)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Trigger != TriggerDemand || rec.Result != ResultOK || rec.Changes != 0 || rec.Drift != 0 || !slices.Equal(rec.HostsWithoutProvider, []string{"ghost"}) {
		t.Errorf("on-demand run = %+v", rec)
	}
	if _, err := f.r.RunJob(context.Background(), "nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: err = %v", err)
	}
	stop()
	// No run after the start runs and the demand run: a 1h schedule has
	// not fired, and the loop has ended.
	if n, m := len(f.history(t, JobAggregates)), len(f.history(t, JobOwnerTraits)); n != 2 || m != 1 {
		t.Errorf("runs recorded: aggregates %d, owner-traits %d (want 2, 1)", n, m)
	}
	if got := f.runs(JobAggregates, ResultOK); got != 2 {
		t.Errorf("runs_total{aggregates,ok} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(f.r.m.drift.WithLabelValues(JobAggregates)); got != 0 {
		t.Errorf("drift gauge after the in-sync run = %v, want 0", got)
	}
}

func equalRecords(a, b RunRecord) bool {
	return a.Job == b.Job && a.Trigger == b.Trigger && a.Start.Equal(b.Start) && a.Duration == b.Duration && a.Result == b.Result &&
		a.Error == b.Error && a.Changes == b.Changes && a.Drift == b.Drift && a.Conflicts == b.Conflicts && a.GiveUps == b.GiveUps &&
		slices.Equal(a.HostsWithoutProvider, b.HostsWithoutProvider) && a.Detail == b.Detail
}

// TestRunner_NeverTwoRunsAtOnce holds a scheduled run inside Placement
// and checks that the scheduled run firing meanwhile is skipped, that an
// on-demand run is refused (ErrJobBusy, and 409 on the endpoint), and
// that no second run of the job ever reaches Placement while the first
// is going.
func TestRunner_NeverTwoRunsAtOnce(t *testing.T) {
	t.Parallel()
	f := newRunnerFixture(t, Options{Jobs: map[string]string{JobAggregates: "* * * * * *"}}) // every second
	stop := f.start(t)
	// The schedule starts after the start runs.
	waitFor(t, 30*time.Second, "the start run", func() bool { return len(f.history(t, JobAggregates)) == 1 })
	hold := holdProviderListings(t, f.e.proxy)
	hold.waitEntered(t) // the next scheduled run is now inside Placement

	rec, err := f.r.RunJob(context.Background(), JobAggregates)
	if !errors.Is(err, ErrJobBusy) || rec.Result != ResultSkipped || rec.Trigger != TriggerDemand {
		t.Fatalf("on-demand run while running: %+v, %v (want skipped, ErrJobBusy)", rec, err)
	}
	status, body := endpointDo(t, f.r.Handler(), http.MethodPost, "/v1/jobs/"+JobAggregates+"/run", "", "")
	if status != http.StatusConflict || !strings.Contains(body, "job is already running") {
		t.Fatalf("POST run while running: %d %s (want 409)", status, body)
	}
	// The cron tick fires while the start run is still held.
	waitFor(t, 10*time.Second, "a scheduled run to be skipped", func() bool {
		return f.logs.FilterMessage("job skipped: already running").FilterField(zap.String("trigger", TriggerSchedule)).Len() > 0
	})
	if n := len(hold.entered); n != 0 || hold.maxFlight.Load() != 1 {
		t.Fatalf("a second run reached Placement while the first was running (%d more listings, %d at once)", n, hold.maxFlight.Load())
	}
	if h := f.history(t, JobAggregates); len(h) != 1 {
		t.Fatalf("runs recorded while the held run is still going: %+v", h)
	}

	hold.Release()
	waitFor(t, 30*time.Second, "the held scheduled run to be recorded", func() bool { return len(f.history(t, JobAggregates)) >= 2 })
	stop()
	h := f.history(t, JobAggregates)
	if h[0].Trigger != TriggerStart || h[1].Trigger != TriggerSchedule || h[1].Result != ResultOK {
		t.Errorf("runs = %+v, want the start run, then the held scheduled run, ok", h)
	}
	for i := 1; i < len(h); i++ {
		if prevEnd := h[i-1].Start.Add(h[i-1].Duration); h[i].Start.Before(prevEnd) {
			t.Errorf("run %d (%s) started at %s, before run %d ended at %s", i, h[i].Trigger, h[i].Start, i-1, prevEnd)
		}
	}
	if got := f.runs(JobAggregates, ResultSkipped); got < 3 {
		t.Errorf("runs_total{aggregates,skipped} = %v, want >= 3 (demand, endpoint, schedule)", got)
	}
}

// TestRunner_TimeoutFailsStuckRun: a run stuck in Placement is cancelled
// by the per-run timeout, recorded as failed, and leaves the job free to
// run again.
func TestRunner_TimeoutFailsStuckRun(t *testing.T) {
	t.Parallel()
	// Long enough for the run to reach the held listing on a loaded
	// machine (Nova is read first); the run must then end by the deadline.
	const timeout = 3 * time.Second
	f := newRunnerFixture(t, Options{RunTimeout: timeout, Jobs: map[string]string{JobAggregates: "@every 1h"}})
	hold := holdProviderListings(t, f.e.proxy)

	rec, err := f.r.RunJob(context.Background(), JobAggregates)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stuck run: err = %v, want a deadline exceeded", err)
	}
	if rec.Result != ResultError || !strings.Contains(rec.Error, "context deadline exceeded") || rec.Duration < timeout {
		t.Fatalf("stuck run record = %+v (want error, deadline exceeded, duration >= %s)", rec, timeout)
	}
	select {
	case <-hold.abandoned: // the request was cancelled, not left running
	case <-time.After(30 * time.Second):
		t.Fatal("the stuck Placement request was not abandoned")
	}
	if h := f.history(t, JobAggregates); len(h) != 1 || h[0].Result != ResultError {
		t.Fatalf("history = %+v, want the failed run", h)
	}
	if got := f.runs(JobAggregates, ResultError); got != 1 {
		t.Errorf("runs_total{aggregates,error} = %v, want 1", got)
	}
	if f.logs.FilterMessage("job run failed").Len() != 1 {
		t.Errorf("the failed run was not logged as a warning")
	}
	if got := f.e.aggregates(t, f.h1); len(got) != 0 {
		t.Errorf("the cancelled run wrote %v", got)
	}

	hold.Release()
	if rec, err := f.r.RunJob(context.Background(), JobAggregates); err != nil || rec.Result != ResultOK || rec.Changes != 2 {
		t.Fatalf("run after the timeout: %+v, %v", rec, err)
	}
}
