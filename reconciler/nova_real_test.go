package reconciler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/novatest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// realNova is the binary's real nova-api, started on first use.
var realNova = novatest.Shared()

// realNovaAPI is a compute API client of the real Nova at endpoint with
// a noauth2 token ("" sends none).
func realNovaAPI(endpoint, token string) *novaclient.API {
	pc := &gophercloud.ProviderClient{}
	if token != "" {
		pc.SetToken(token)
	}
	return novaclient.NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(endpoint)})
}

// freshNova is the real Nova with no computes, no aggregates and both
// cells readable.
func freshNova(t *testing.T) *novatest.Nova {
	t.Helper()
	n := realNova.Get(t)
	if err := n.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	return n
}

// oracle is Nova's own verdict: get_minimum_version_all_cells(
// ['nova-compute'], require_all=True) answers at least the required
// version without raising.
func oracle(t *testing.T, n *novatest.Nova) bool {
	t.Helper()
	open, err := n.GateOpensPerNova(context.Background(), MinComputeVersionOwnerTrait)
	if err != nil {
		t.Fatal(err)
	}
	return open
}

// gateFrom evaluates the gate once from a compute source, as the
// offline gate command does.
func gateFrom(t *testing.T, src ComputeSource, records ...ServiceRecord) GateState {
	t.Helper()
	in := GateInput{Required: MinComputeVersionOwnerTrait, Records: records}
	in.SetList(src.Computes(context.Background()))
	return EvaluateGate(in)
}

// TestGate_RealNovaCells: two cells on the real Nova, with Nova's own
// minimum as the oracle. All computes at 73 open the gate. A compute at
// 72 in cell2 with cell2 down (UNKNOWN in os-services) keeps it closed,
// whether the cells come from the API database or the computes from
// os-services with a heartbeat claiming 73. With cell2 missing from the
// configured cells, a 72 there keeps it closed.
func TestGate_RealNovaCells(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "a1", Version: 73}, novatest.Compute{Cell: "cell1", Host: "a2", Version: 73},
		novatest.Compute{Cell: "cell2", Host: "b1", Version: 73}); err != nil {
		t.Fatal(err)
	}
	api := realNovaAPI(n.Endpoint, novatest.Token)
	mapped := novaclient.CellDatabases{APIDatabase: n.APIDatabase}
	onlyCell1 := novaclient.CellDatabases{Cells: []novaclient.CellDatabase{{Name: "cell1", DSN: n.Cell("cell1").URL}}, Nova: api}
	// Heartbeats give os-services' computes their versions; b1's claims
	// 73 whatever its cell says.
	var heartbeats []ServiceRecord
	for _, h := range []string{"a1", "a2", "b1"} {
		heartbeats = append(heartbeats, ServiceRecord{Host: h, Binary: ComputeBinary, Version: 73, Authenticated: true})
	}

	check := func(step string, src ComputeSource, want bool, reason string) {
		t.Helper()
		g := gateFrom(t, src, heartbeats...)
		if g.Open != want || !strings.Contains(g.Reason, reason) {
			t.Errorf("%s: gate open %v (%s), want %v with %q", step, g.Open, g.Reason, want, reason)
		}
		if g.Open && strings.Contains(g.Reason, "failed") {
			t.Errorf("%s: open gate with a failure in its reason: %s", step, g.Reason)
		}
	}
	if !oracle(t, n) {
		t.Fatal("oracle: Nova's minimum over all cells is not 73 with every compute at 73")
	}
	check("all at 73, cells from the API database", mapped, true, "all 3 nova-compute services at version 73")
	check("all at 73, os-services", api, true, "all 3")

	if err := n.SetVersion(ctx, "cell2", "b1", 72); err != nil {
		t.Fatal(err)
	}
	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	if oracle(t, n) {
		t.Fatal("oracle: Nova answers with cell2 unreadable")
	}
	check("cell2 down, cells from the API database", mapped, false, "cell cell2: Error 1044")
	check("cell2 down, os-services and a heartbeat at 73", api, false, "cell Nova cannot read (status UNKNOWN)")
	check("cell2 down, cell2 not configured", onlyCell1, false, "in no configured cell database")

	if err := n.Readable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	if oracle(t, n) {
		t.Fatal("oracle: Nova's minimum is 73 with b1 at 72")
	}
	check("cell2 readable with b1 at 72, cell2 not configured", onlyCell1, false, "in no configured cell database (reconciler.nova.cell_databases misses a cell): b1")
	check("cell2 readable with b1 at 72, cells from the API database", mapped, false, "below version 73 (minimum 72)")
}

// TestGate_RealNovaCellUnreadableAfterOpen: the daemon's gate opens on
// the real cells, then cell2 becomes unreadable: the next owner-traits
// run fails, the gate closes with the cell in its reason, the failure is
// logged with the cell's name and counted, and the offline evaluation
// agrees. Readable again, the gate reopens and the gauge clears.
func TestGate_RealNovaCellUnreadableAfterOpen(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "u1", Version: 73}, novatest.Compute{Cell: "cell2", Host: "u2", Version: 73}); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, placementtest.Ours)
	core, logs := observer.New(zap.WarnLevel)
	reg := prometheus.NewRegistry()
	src := novaclient.CellDatabases{APIDatabase: n.APIDatabase}
	r, err := New(Options{Placement: e.pl, Nova: realNovaAPI(n.Endpoint, novatest.Token), Computes: src,
		Jobs: map[string]string{JobOwnerTraits: "@every 1h"}, Logger: zap.New(core), Registerer: reg, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	run := func() RunRecord {
		t.Helper()
		rec, err := r.RunJob(ctx, JobOwnerTraits)
		if errors.Is(err, ErrUnknownJob) || errors.Is(err, ErrJobBusy) {
			t.Fatal(err)
		}
		return rec
	}
	unreadable := testutil.ToFloat64(r.m.cellUnreadable.WithLabelValues("cell2"))
	if rec := run(); rec.Result != ResultOK || !r.Gate().Open || !oracle(t, n) {
		t.Fatalf("all at 73: run %s %s, gate %+v, want ok and open", rec.Result, rec.Error, r.Gate())
	}
	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	rec := run()
	g := r.Gate()
	if rec.Result != ResultError || !strings.Contains(rec.Error, "cell cell2") {
		t.Errorf("cell2 unreadable: run %s %q, want error naming cell cell2", rec.Result, rec.Error)
	}
	if g.Open || !strings.Contains(g.Reason, "could not be read") || strings.Contains(g.Reason, "all 2") {
		t.Errorf("cell2 unreadable: gate open %v, reason %q; want closed, saying the list could not be read", g.Open, g.Reason)
	}
	if oracle(t, n) {
		t.Error("oracle: Nova answers with cell2 unreadable")
	}
	if offline := gateFrom(t, src); offline.Open {
		t.Errorf("offline gate open with cell2 unreadable: %s", offline.Reason)
	}
	if got := logs.FilterMessageSnippet("Nova cell database not readable").FilterField(zap.String("cell", "cell2")).Len(); got != 1 {
		t.Errorf("%d error lines naming cell2, want 1; logs: %v", got, logs.All())
	}
	if v := testutil.ToFloat64(r.m.cellUnreadable.WithLabelValues("cell2")); v != 1 || unreadable != 0 {
		t.Errorf("nova_cell_unreadable{cell=cell2} = %v (before %v), want 1 (0)", v, unreadable)
	}
	if v := testutil.ToFloat64(r.m.listErrors); v != 1 {
		t.Errorf("compute_list_errors_total = %v, want 1", v)
	}
	if err := n.Readable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	if rec := run(); rec.Result != ResultOK || !r.Gate().Open {
		t.Errorf("cell2 readable again: run %s %s, gate %+v, want ok and open", rec.Result, rec.Error, r.Gate())
	}
	if v := testutil.ToFloat64(r.m.cellUnreadable.WithLabelValues("cell2")); v != 0 {
		t.Errorf("nova_cell_unreadable{cell=cell2} = %v after reading it again, want 0", v)
	}
}

// TestNova_RealNotAList: a 300 (the root, without /v2.1) and a 204
// (noauth2 without a token) are Nova unavailable, never an empty Nova;
// the real endpoint lists.
func TestNova_RealNotAList(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "n1", Version: 73}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		api  *novaclient.API
		want string
	}{
		{"root without /v2.1", realNovaAPI(n.Root, novatest.Token), "answered 300"},
		{"no token", realNovaAPI(n.Endpoint, ""), "answered 204"},
	} {
		if _, err := c.api.State(ctx); !errors.Is(err, novaclient.ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: novaclient.State: %v, want novaclient.ErrUnavailable, %s", c.name, err, c.want)
		}
		if _, err := c.api.Computes(ctx); !errors.Is(err, novaclient.ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Computes: %v, want novaclient.ErrUnavailable, %s", c.name, err, c.want)
		}
	}
	list, err := realNovaAPI(n.Endpoint, novatest.Token).Computes(ctx)
	if err != nil || len(list) != 1 || list[0].Host != "n1" {
		t.Errorf("Computes = %v, %v; want n1", list, err)
	}
}

// TestAggregates_RealNovaPaging mirrors the real Nova's aggregates into
// both Placements: hypervisors come in pages of novatest.MaxLimit, an
// Ironic host's three nodes all join its aggregate, and a host removed
// from its last aggregate through the API loses it in Placement.
func TestAggregates_RealNovaPaging(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	nodes, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "p1", Version: 73}, novatest.Compute{Cell: "cell1", Host: "p2", Version: 73},
		novatest.Compute{Cell: "cell2", Host: "p3", Version: 73}, novatest.Compute{Cell: "cell2", Host: "bm", Version: 73, Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := n.CreateAggregate(ctx, "paged")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"p1", "p3", "bm"} {
		if err := n.AddHost(ctx, agg.ID, h); err != nil {
			t.Fatal(err)
		}
	}
	api := realNovaAPI(n.Endpoint, novatest.Token)
	st, err := api.State(ctx)
	if err != nil || len(st.Nodes) != 6 || len(st.Nodes) <= novatest.MaxLimit {
		t.Fatalf("novaclient.State: %d nodes, %v; want all 6 over pages of %d", len(st.Nodes), err, novatest.MaxLimit)
	}
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind)
			for _, uuids := range nodes {
				for _, u := range uuids {
					e.provider(t, u, u, "", "COMPUTE_NODE")
				}
			}
			state, err := OpenStateFile("")
			if err != nil {
				t.Fatal(err)
			}
			s := &AggregateSync{Nova: api, Placement: e.pl, State: state, Logger: zaptest.NewLogger(t), Retry: fastRetry}
			want := map[string][]string{"p1": {agg.UUID}, "p2": nil, "p3": {agg.UUID}, "bm": {agg.UUID}}
			check := func(step string) {
				t.Helper()
				for host, w := range want {
					for _, u := range nodes[host] {
						if got := e.aggregates(t, u); !slices.Equal(got, w) {
							t.Errorf("%s: host %s provider %s: %v, want %v", step, host, u, got, w)
						}
					}
				}
			}
			if _, err := s.Run(ctx, false); err != nil {
				t.Fatal(err)
			}
			check("first run")
			if err := n.RemoveHost(ctx, agg.ID, "p3"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = n.AddHost(ctx, agg.ID, "p3") })
			res, err := s.Run(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			want["p3"] = nil
			check("after removing p3")
			if len(res.Applied) != 1 || !slices.Equal(res.Applied[0].Hosts, []string{"p3"}) {
				t.Errorf("applied %+v, want one change for host p3", res.Applied)
			}
			if err := n.AddHost(ctx, agg.ID, "p3"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGate_RealNovaReadOnlyUser: a user granted only the columns the
// gate reads (docs/connecting.md, Nova) opens the gate on the real databases,
// never reading Nova's own credentials from cell_mappings when every
// cell is configured; a cell the configuration misses is then an error
// naming it, and the gate stays closed.
func TestGate_RealNovaReadOnlyUser(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "r1", Version: 73}, novatest.Compute{Cell: "cell2", Host: "r2", Version: 73}); err != nil {
		t.Fatal(err)
	}
	const user = "'placement_syncd'@'127.0.0.1'"
	grants := []string{"CREATE USER IF NOT EXISTS " + user + " IDENTIFIED BY 'ro-secret'",
		"GRANT SELECT (uuid, name) ON nova_api.cell_mappings TO " + user}
	for _, db := range []string{"nova_cell1", "nova_cell2"} {
		grants = append(grants, "GRANT SELECT (host, `binary`, version, forced_down, deleted) ON "+db+".services TO "+user)
	}
	if err := n.DB.Exec(ctx, "", grants...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.DB.Exec(ctx, "", "DROP USER "+user) })
	ro := func(db string) string {
		return "mysql+pymysql://placement_syncd:ro-secret@" + n.DB.Addr + "/" + db + "?charset=utf8"
	}
	both := novaclient.CellDatabases{APIDatabase: ro("nova_api"), Cells: []novaclient.CellDatabase{{Name: "cell1", DSN: ro("nova_cell1")}, {Name: "cell2", DSN: ro("nova_cell2")}}}
	if g := gateFrom(t, both); !g.Open || !oracle(t, n) {
		t.Errorf("read-only user, every cell configured: gate %+v, want open as Nova's minimum says", g)
	}
	missing := novaclient.CellDatabases{APIDatabase: ro("nova_api"), Cells: both.Cells[:1]}
	if g := gateFrom(t, missing); g.Open || !strings.Contains(g.Reason, "cell cell2 is not in reconciler.nova.cell_databases") {
		t.Errorf("read-only user, cell2 not configured: gate open %v, reason %q; want closed naming cell2", g.Open, g.Reason)
	}
}
