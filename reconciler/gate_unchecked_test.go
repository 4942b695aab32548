package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// listerDouble is a compute list that answers as os-services would.
type listerDouble []novaclient.ComputeService

func (l listerDouble) Computes(context.Context) ([]novaclient.ComputeService, error) { return l, nil }

// TestGate_CellsUnchecked: cell databases alone, with neither the API
// database nor a compute API to check them against, keep the gate
// closed without reading a cell (a cell left out would never be
// counted); the job fails, the reason, the log line and the list error
// counter name what is missing; the operator's assertion
// (Complete), an API database or Nova's own list make the cells read
// again; an override still wins.
func TestGate_CellsUnchecked(t *testing.T) {
	ctx := context.Background()
	// Nothing listens there: a read would fail as unreadable, not as
	// unchecked.
	cells := []novaclient.CellDatabase{{Name: "cell0", DSN: "mysql+pymysql://nova@127.0.0.1:1/nova_cell0"},
		{Name: "cell1", DSN: "mysql+pymysql://nova@127.0.0.1:1/nova_cell1"}}
	e := newEnv(t, placementtest.Ours)
	core, logs := observer.New(zap.WarnLevel)
	reg := prometheus.NewRegistry()
	r, err := New(Options{Placement: e.pl, Computes: novaclient.CellDatabases{Cells: cells},
		Jobs: map[string]string{JobOwnerTraits: "@every 1h"}, Logger: zap.New(core), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.RunJob(ctx, JobOwnerTraits)
	if errors.Is(err, ErrUnknownJob) || rec.Result != ResultError || !strings.Contains(rec.Error, "cell_databases lists only cell0, cell1") {
		t.Fatalf("run %s %q (%v), want error naming the listed cells", rec.Result, rec.Error, err)
	}
	g := r.Gate()
	for _, want := range []string{"a cell of Nova's may be missing", "reconciler.nova.api_database", "reconciler.nova.endpoint or cloud", "cell_databases_complete: true"} {
		if g.Open || !strings.Contains(g.Reason, want) {
			t.Errorf("gate open %v, reason %q; want closed, naming %q", g.Open, g.Reason, want)
		}
	}
	if n := logs.FilterMessageSnippet("OWNER_NOVA gate kept closed").FilterLevelExact(zap.ErrorLevel).Len(); n != 1 {
		t.Errorf("%d error lines saying why the gate is kept closed, want 1: %v", n, logs.All())
	}
	if v := testutil.ToFloat64(r.m.listErrors); v != 1 {
		t.Errorf("compute_list_errors_total = %v, want 1", v)
	}
	t.Logf("reason: %s", g.Reason)

	var unchecked *novaclient.UncheckedCellsError
	var unreadable *novaclient.UnreadableCellsError
	for name, src := range map[string]novaclient.CellDatabases{
		"asserted complete": {Cells: cells, Complete: true},
		"with Nova's list":  {Cells: cells, Nova: listerDouble{{Host: "h1"}}},
	} {
		_, err := src.Computes(ctx)
		if errors.As(err, &unchecked) || !errors.As(err, &unreadable) || !errors.Is(err, novaclient.ErrUnavailable) {
			t.Errorf("%s: %v, want the cells read (and found unreadable)", name, err)
		}
	}
	withAPI := novaclient.CellDatabases{APIDatabase: "mysql+pymysql://nova@127.0.0.1:1/nova_api", Cells: cells}
	if _, err := withAPI.Computes(ctx); err == nil || errors.As(err, &unchecked) {
		t.Errorf("with the API database: %v, want its cell mappings read (and found unreadable)", err)
	}

	if err := r.SetGateOverride(GateOpen); err != nil {
		t.Fatal(err)
	}
	if g := r.Gate(); !g.Open {
		t.Errorf("override open: gate %+v, want open", g)
	}
}

// TestEvaluateGate_CellsUnchecked: the reason wins over the list error
// it comes with, and over an empty list.
func TestEvaluateGate_CellsUnchecked(t *testing.T) {
	var in GateInput
	in.Required = MinComputeVersionOwnerTrait
	in.SetList(nil, &novaclient.UncheckedCellsError{Cells: []string{"cell1"}})
	g := EvaluateGate(in)
	if g.Open || !strings.HasPrefix(g.Reason, "a cell of Nova's may be missing from the compute list: reconciler.nova.cell_databases lists only cell1") {
		t.Errorf("gate %+v", g)
	}
	in = GateInput{Required: MinComputeVersionOwnerTrait}
	in.SetList([]novaclient.ComputeService{{Host: "h", Version: 73}}, nil)
	if g := EvaluateGate(in); !g.Open || in.CellsUnchecked != "" {
		t.Errorf("a list read: gate %+v, input %+v", g, in)
	}
}
