package reconciler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAggregateSync_NeverMassDeletes runs the cases that used to strip
// every provider against both servers, through the Nova double: an empty
// Nova answer, a host Nova lists without hypervisors, and a plan removing
// more than the limit. Each writes nothing until forced.
func TestAggregateSync_NeverMassDeletes(t *testing.T) {
	t.Parallel()
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testNeverMassDeletes(t, kind)
		})
	}
}

func testNeverMassDeletes(t *testing.T, kind string) {
	ctx := context.Background()
	e := newEnv(t, kind)
	agA, agB := uuidN("aaaaaaaa", 1), uuidN("aaaaaaaa", 2)
	h1, h2, h3 := uuidN("11111111", 1), uuidN("11111111", 2), uuidN("11111111", 3)
	nodes := []novaclient.ComputeNode{{UUID: h1, Hostname: "h1", Host: "h1"}, {UUID: h2, Hostname: "h2", Host: "h2"}, {UUID: h3, Hostname: "h3", Host: "h3"}}
	for _, n := range nodes {
		e.provider(t, n.UUID, n.Hostname, "", "COMPUTE_NODE")
	}
	all := []novaclient.Aggregate{{UUID: agA, Name: "agA", Hosts: []string{"h1", "h2", "h3"}}, {UUID: agB, Name: "agB", Hosts: []string{"h1", "h2", "h3"}}}
	e.nova.set(all, nodes)
	state, err := OpenStateFile(filepath.Join(t.TempDir(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	refusals := map[string]int{}
	s := &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Logger: zaptest.NewLogger(t), Retry: fastRetry,
		OnRefuse: func(reason string) { refusals[reason]++ }}
	if _, err := s.Run(ctx, false); err != nil {
		t.Fatal(err)
	}
	unchanged := func(step string) {
		t.Helper()
		for _, p := range []string{h1, h2, h3} {
			if got := e.aggregates(t, p); !sameSet(got, []string{agA, agB}) {
				t.Fatalf("%s: provider %s has %v, want both Nova aggregates", step, p, got)
			}
		}
	}
	unchanged("first run")

	t.Run("empty Nova answer is refused, dry run included; force goes through", func(t *testing.T) {
		e.nova.set(nil, nil)
		for _, dry := range []bool{true, false} {
			e.proxy.Reset()
			res, err := s.RunWith(ctx, RunFlags{DryRun: dry})
			if !errors.Is(err, ErrRefused) || res == nil || res.Refused == "" || e.proxy.Writes() != 0 {
				t.Fatalf("dry=%v: err %v, result %+v, %d writes (want ErrRefused, a reason, 0 writes)", dry, err, res, e.proxy.Writes())
			}
		}
		unchanged("refused empty answer")
		if refusals[RefusedEmptyAnswer] != 2 {
			t.Fatalf("refusals %v, want 2 empty_answer", refusals)
		}
		res, err := s.RunWith(ctx, RunFlags{Force: true})
		if err != nil || res.Forced == "" || res.Changes() != 6 {
			t.Fatalf("forced: %v, %+v", err, res)
		}
		e.nova.set(all, nodes)
		if _, err := s.RunWith(ctx, RunFlags{Force: true}); err != nil {
			t.Fatal(err)
		}
		unchanged("restored")
	})

	t.Run("host listed without hypervisors keeps its associations", func(t *testing.T) {
		e.nova.set(all, nodes[:2]) // h3's cell is down: no hypervisor for it
		res, err := s.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Plan.Held) != 1 || res.Plan.Held[0].Provider != h3 || res.Plan.Held[0].Host != "h3" || res.Plan.Removals() != 0 {
			t.Fatalf("plan: held %+v, removals %d (want h3 held, none)", res.Plan.Held, res.Plan.Removals())
		}
		unchanged("cell down")
		e.nova.set(all, nodes)
		if res, err := s.Run(ctx, false); err != nil || len(res.Plan.Held) != 0 || res.Writes() != 0 {
			t.Fatalf("cell back: %v, %+v", err, res)
		}
	})

	t.Run("more removals than max_removals is refused; force applies", func(t *testing.T) {
		s.MaxRemovals = &removallimit.Limit{N: 2}
		e.nova.set(all[:1], nodes) // agB deleted from Nova: 3 removals
		e.proxy.Reset()
		res, err := s.Run(ctx, true)
		if !errors.Is(err, ErrRefused) || res.Plan.Removals() != 3 || e.proxy.Writes() != 0 {
			t.Fatalf("dry run: %v, removals %d, %d writes", err, res.Plan.Removals(), e.proxy.Writes())
		}
		if _, err := s.Run(ctx, false); !errors.Is(err, ErrRefused) || refusals[RefusedMaxRemovals] != 2 {
			t.Fatalf("run: %v, refusals %v", err, refusals)
		}
		unchanged("refused removals")
		if res, err := s.RunWith(ctx, RunFlags{Force: true}); err != nil || res.Changes() != 3 {
			t.Fatalf("forced: %v, %+v", err, res)
		}
		for _, p := range []string{h1, h2, h3} {
			if got := e.aggregates(t, p); !sameSet(got, []string{agA}) {
				t.Fatalf("provider %s has %v after the forced run, want agA only", p, got)
			}
		}
	})
}

// TestAggregatesJob_RefusalIsVisible: the scheduled job meets an empty
// Nova answer after a good run: the run fails with the refusal, nothing
// is written, and refused_runs_total counts it by reason.
func TestAggregatesJob_RefusalIsVisible(t *testing.T) {
	t.Parallel()
	f := newRunnerFixture(t, Options{Jobs: map[string]string{JobAggregates: "@every 1h"}})
	ctx := context.Background()
	if rec, err := f.r.RunJob(ctx, JobAggregates); err != nil || rec.Changes != 2 {
		t.Fatalf("first run: %+v, %v", rec, err)
	}
	f.e.nova.set(nil, nil)
	f.e.proxy.Reset()
	rec, err := f.r.RunJob(ctx, JobAggregates)
	if !errors.Is(err, ErrRefused) || rec.Result != ResultError || f.e.proxy.Writes() != 0 ||
		!strings.HasPrefix(rec.Detail, "refused, nothing written: Nova listed no hypervisors") {
		t.Fatalf("refused run: %+v, %v, %d writes", rec, err, f.e.proxy.Writes())
	}
	if got := testutil.ToFloat64(f.r.m.refused.WithLabelValues(RefusedEmptyAnswer)); got != 1 {
		t.Errorf("refused_runs_total{reason=empty_answer} = %v, want 1", got)
	}
	if f.logs.FilterMessage("aggregate mirroring refused; nothing written (sync-aggregates --force applies it)").Len() != 1 {
		t.Error("the refusal was not logged")
	}
	if got := f.e.aggregates(t, f.h1); len(got) != 1 || got[0] != f.agg {
		t.Errorf("h1 aggregates after the refusal: %v", got)
	}
}
