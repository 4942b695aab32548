package placementsrv

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// followerDouble is a replica's store whose change feed is scripted: Fresh
// and Poll fail with feedErr, and memory was last confirmed at confirmed.
// The records come from the real store it wraps.
type followerDouble struct {
	store.Store
	feedErr      error
	confirmed    time.Time
	fresh, polls atomic.Int32
}

func (d *followerDouble) Replicated() bool { return true }

func (d *followerDouble) Poll(context.Context, time.Duration) error {
	d.polls.Add(1)
	return d.feedErr
}

func (d *followerDouble) Fresh(context.Context) error {
	d.fresh.Add(1)
	return d.feedErr
}

func (d *followerDouble) LastConfirmed() time.Time { return d.confirmed }

// replicaServer is a test server over d with maxStale, its registry and
// the log lines of its feed logger.
type replicaServer struct {
	*testServer
	reg  *prometheus.Registry
	logs *observer.ObservedLogs
}

func startReplicaServer(t *testing.T, d *followerDouble, maxStale time.Duration) replicaServer {
	t.Helper()
	reg := prometheus.NewRegistry()
	core, logs := observer.New(zapcore.WarnLevel)
	ts := startServerOpts(t, nil, func(o *Options) {
		d.Store, o.Store = o.Store, d
		o.MaxStaleness, o.Registerer, o.Logger = maxStale, reg, zap.New(core)
	})
	return replicaServer{testServer: ts, reg: reg, logs: logs}
}

// unconfirmed is the count of unconfirmed reads with answer.
func (s replicaServer) unconfirmed(t *testing.T, answer string) float64 {
	t.Helper()
	fams, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "placement_syncd_store_feed_unconfirmed_reads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if l := m.GetLabel(); len(l) == 1 && l[0].GetValue() == answer {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no unconfirmed reads series with answer=%q", answer)
	return 0
}

var errDatabaseDown = errors.New("dial tcp: connection refused")

// TestUnconfirmedReads_Fresh: a confirmed read answers from memory,
// counting nothing.
func TestUnconfirmedReads_Fresh(t *testing.T) {
	d := &followerDouble{}
	s := startReplicaServer(t, d, 0)
	if r := s.do(t, call{Method: "GET", Path: "/resource_providers", Version: "1.39"}); r.Status != 200 {
		t.Fatalf("GET /resource_providers: %d %s", r.Status, r.Body)
	}
	if n := d.fresh.Load(); n != 1 {
		t.Errorf("Fresh called %d times, want 1", n)
	}
	if s.unconfirmed(t, "stale") != 0 || s.unconfirmed(t, "refused") != 0 {
		t.Errorf("unconfirmed reads counted on a confirmed read")
	}
}

// TestUnconfirmedReads_Refused: with no staleness allowed, a read Fresh
// cannot confirm answers 503 in Placement's error JSON, counted and
// logged; HEAD too, without a body.
func TestUnconfirmedReads_Refused(t *testing.T) {
	d := &followerDouble{feedErr: errDatabaseDown, confirmed: time.Now()}
	s := startReplicaServer(t, d, 0)
	r := s.do(t, call{Method: "GET", Path: "/resource_providers", Version: "1.39"})
	checkUnavailable(t, r)
	if got := s.unconfirmed(t, "refused"); got != 1 {
		t.Errorf("refused reads = %g, want 1", got)
	}
	if got := s.unconfirmed(t, "stale"); got != 0 {
		t.Errorf("stale reads = %g, want 0", got)
	}
	lines := s.logs.FilterMessage("read not confirmed with the change feed").All()
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1", len(lines))
	}
	f := lines[0].ContextMap()
	if f["answer"] != "refused" || f["route"] != "/resource_providers" || f["path"] != "/resource_providers" || f["staleness"] == "" {
		t.Errorf("log line fields %v", f)
	}
	if h := s.do(t, call{Method: "HEAD", Path: "/resource_providers", Version: "1.39"}); h.Status != 503 || len(h.Body) != 0 {
		t.Errorf("HEAD: %d %q, want 503 without a body", h.Status, h.Body)
	}
}

// checkUnavailable checks a 503 in Placement's error JSON.
func checkUnavailable(t *testing.T, r testResponse) {
	t.Helper()
	if r.Status != 503 {
		t.Fatalf("status %d %s, want 503", r.Status, r.Body)
	}
	errs, _ := r.JSON(t)["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("body %s: want one error", r.Body)
	}
	e, _ := errs[0].(map[string]any)
	if e["status"] != float64(503) || e["title"] != "Service Unavailable" || e["code"] != "placement.undefined_code" {
		t.Errorf("error %v", e)
	}
	if detail, _ := e["detail"].(string); !strings.Contains(detail, "cannot confirm that it holds every acknowledged write") {
		t.Errorf("detail %q", detail)
	}
	if strings.Contains(string(r.Body), errDatabaseDown.Error()) {
		t.Errorf("the database's error reached the client: %s", r.Body)
	}
}

// TestUnconfirmedReads_StaleAllowed: memory confirmed within
// max_staleness answers from memory, counted as stale.
func TestUnconfirmedReads_StaleAllowed(t *testing.T) {
	d := &followerDouble{feedErr: errDatabaseDown, confirmed: time.Now().Add(-time.Minute)}
	s := startReplicaServer(t, d, time.Hour)
	if r := s.do(t, call{Method: "GET", Path: "/resource_providers", Version: "1.39"}); r.Status != 200 {
		t.Fatalf("GET /resource_providers: %d %s, want 200 from memory", r.Status, r.Body)
	}
	if got := s.unconfirmed(t, "stale"); got != 1 {
		t.Errorf("stale reads = %g, want 1", got)
	}
	if got := s.unconfirmed(t, "refused"); got != 0 {
		t.Errorf("refused reads = %g, want 0", got)
	}
}

// TestUnconfirmedReads_TooStale: memory confirmed longer ago than
// max_staleness, or never, answers 503.
func TestUnconfirmedReads_TooStale(t *testing.T) {
	for name, confirmed := range map[string]time.Time{"old": time.Now().Add(-2 * time.Hour), "never": {}} {
		t.Run(name, func(t *testing.T) {
			d := &followerDouble{feedErr: errDatabaseDown, confirmed: confirmed}
			s := startReplicaServer(t, d, time.Hour)
			checkUnavailable(t, s.do(t, call{Method: "GET", Path: "/resource_providers", Version: "1.39"}))
			if got := s.unconfirmed(t, "refused"); got != 1 {
				t.Errorf("refused reads = %g, want 1", got)
			}
		})
	}
}

// TestUnconfirmedReads_RootAndUnmatched: GET / and a path no route
// serves never ask the feed.
func TestUnconfirmedReads_RootAndUnmatched(t *testing.T) {
	d := &followerDouble{feedErr: errDatabaseDown}
	s := startReplicaServer(t, d, 0)
	if r := s.do(t, call{Method: "GET", Path: "/"}); r.Status != 200 {
		t.Errorf("GET /: %d %s", r.Status, r.Body)
	}
	if r := s.do(t, call{Method: "GET", Path: "/no/such/route"}); r.Status != 404 {
		t.Errorf("GET /no/such/route: %d %s", r.Status, r.Body)
	}
	if n := d.fresh.Load(); n != 0 {
		t.Errorf("Fresh called %d times, want 0", n)
	}
}

// TestUnconfirmedReads_WritesUnchanged: a write whose catch-up fails is
// still served (it catches up itself inside the store), never a 503 of
// this layer, and counts no read.
func TestUnconfirmedReads_WritesUnchanged(t *testing.T) {
	d := &followerDouble{feedErr: errDatabaseDown}
	s := startReplicaServer(t, d, 0)
	if r := s.do(t, call{Method: "PUT", Path: "/traits/CUSTOM_WRITE", Version: "1.39"}); r.Status != 201 {
		t.Fatalf("PUT /traits/CUSTOM_WRITE: %d %s, want 201", r.Status, r.Body)
	}
	if d.polls.Load() != 1 || d.fresh.Load() != 0 {
		t.Errorf("Poll called %d times and Fresh %d, want 1 and 0", d.polls.Load(), d.fresh.Load())
	}
	if got := s.unconfirmed(t, "refused"); got != 0 {
		t.Errorf("refused reads = %g, want 0", got)
	}
}

// TestUnconfirmedReads_LogRateLimited: every refused read is counted, but
// a burst logs one line; the next line, a second later, tells how many
// were left out.
func TestUnconfirmedReads_LogRateLimited(t *testing.T) {
	d := &followerDouble{feedErr: errDatabaseDown}
	s := startReplicaServer(t, d, 0)
	const burst = 5
	for range burst {
		checkUnavailable(t, s.do(t, call{Method: "GET", Path: "/traits", Version: "1.39"}))
	}
	if got := s.unconfirmed(t, "refused"); got != burst {
		t.Errorf("refused reads = %g, want %d", got, burst)
	}
	if n := s.logs.Len(); n != 1 {
		t.Errorf("%d log lines after a burst of %d, want 1", n, burst)
	}
	time.Sleep(unconfirmedLogEvery + 50*time.Millisecond)
	checkUnavailable(t, s.do(t, call{Method: "GET", Path: "/traits", Version: "1.39"}))
	lines := s.logs.All()
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2", len(lines))
	}
	if got := lines[1].ContextMap()["suppressed"]; got != int64(burst-1) {
		t.Errorf("suppressed = %v, want %d", got, burst-1)
	}
}
