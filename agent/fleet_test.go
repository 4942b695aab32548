package agent_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// Fleet sizes. Ours runs at the 10,000 nodes by default (its first
// pass is 30,000 writes through an instrumented server: a few minutes
// under -race, so scripts/test gives go test a longer timeout). The
// reference makes about 50 writes a second at best, so 10,000 nodes there
// take over fifteen minutes; it runs at 200 by default and at 10,000 by
// hand:
//
//	PLACEMENT_SYNCD_REFERENCE_FLEET=10000 \
//	    go test -run TestFleet -timeout 60m -v ./agent/
const (
	FleetEnv          = "PLACEMENT_SYNCD_FLEET"
	ReferenceFleetEnv = "PLACEMENT_SYNCD_REFERENCE_FLEET"
	ourFleet          = 10000
	referenceFleet    = 200
	changed           = 100
	// idleBudget is what an unchanged pass may cost, besides one request
	// per changed node: version discovery (the only request of a pass
	// from the cache), and after a restart one list to check the cache.
	idleBudget = 10
)

// TestFleet: a generated Ironic fleet (2% in maintenance, 3% cleaning)
// against both servers, with request counts taken on the server's side
// (our /metrics; for the reference, a counting proxy in front of it): an
// unchanged pass makes at most idleBudget requests and no write, in a
// long-running agent and in one restarted with its state file, and, for
// writes, in a fresh one without; a pass after 100
// nodes changed state makes one write per changed node and moves the
// generation of those nodes only.
func TestFleet(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			n, env := ourFleet, FleetEnv
			if kind == placementtest.Reference {
				n, env = referenceFleet, ReferenceFleetEnv
			}
			if v := os.Getenv(env); v != "" {
				var err error
				if n, err = strconv.Atoi(v); err != nil || n < changed {
					t.Fatalf("%s=%q: want a number >= %d", env, v, changed)
				}
			}
			testFleet(t, kind, n)
		})
	}
}

// fleet is one server with a way to count, on its side, the requests it
// answered since the last reset, by method.
type fleet struct {
	srv    *placementtest.Server
	url    string // what the agent talks to
	counts func() map[string]int
	reset  func()
}

func startFleet(t *testing.T, kind string) *fleet {
	srv := placementtest.Start(t, kind)
	if kind == placementtest.Reference {
		proxy := placementtest.NewProxy(t, srv.URL)
		return &fleet{srv: srv, url: proxy.URL, counts: proxy.Counts, reset: proxy.Reset}
	}
	f := &fleet{srv: srv, url: srv.URL}
	var base map[string]int
	f.counts = func() map[string]int {
		now := ourRequests(t, srv)
		for m := range now {
			now[m] -= base[m]
		}
		return now
	}
	f.reset = func() { base = ourRequests(t, srv) }
	f.reset()
	return f
}

// ourRequests scrapes our server's /metrics: requests answered by
// method, from the request latency histogram's counts. (Not linted: at
// 10,000 providers the per-provider inventory families make the lint
// quadratic; scripts/check-metrics lints a scrape.)
func ourRequests(t *testing.T, srv *placementtest.Server) map[string]int {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fams["placement_syncd_http_request_duration_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "method" {
				out[lp.GetValue()] += int(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func total(counts map[string]int) (all, writes int) {
	for m, c := range counts {
		all += c
		if m != http.MethodGet && m != http.MethodHead {
			writes += c
		}
	}
	return all, writes
}

func fleetNodes(n int) []ironictest.Node {
	nodes := make([]ironictest.Node, n)
	for i := range nodes {
		nodes[i] = ironictest.Node{UUID: nodeUUID(21, i), ResourceClass: "baremetal-gold", ProvisionState: "available",
			PowerState: "power off", Traits: []string{"CUSTOM_RAID5"}}
		switch i % 100 {
		case 1, 2:
			nodes[i].Maintenance = true
		case 3, 4, 5:
			nodes[i].ProvisionState = "clean wait"
		}
	}
	return nodes
}

func testFleet(t *testing.T, kind string, n int) {
	f := startFleet(t, kind)
	double := ironictest.NewIronicDouble(t, fleetNodes(n)...)
	ironicFleet := []drivers.Driver{ironicDriver(t, double)}
	// The periodic re-read is off: its slice of the fleet per pass
	// depends on the clock (TestRefreshSpreadsRereads covers it).
	noRefresh := func(o *agent.Options) { o.RefreshInterval = -1 }
	state := filepath.Join(t.TempDir(), "agent-state.json")
	withState := func(o *agent.Options) { noRefresh(o); o.StateFile = state }
	e := newEnv(t, f.url, ironicFleet, withState)
	pass := func(e *env, what string) (all, writes int) {
		t.Helper()
		f.reset()
		if err := e.agent.SyncOnce(t.Context()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		counts := f.counts()
		all, writes = total(counts)
		r, _ := e.agent.LastResults()
		t.Logf("%s, %d nodes, %s: %d requests %v; agent: %d writes, re-read %v, cache hits %d, %v",
			kind, n, what, all, counts, r[0].Writes, r[0].Reread, r[0].CacheHits, r[0].Duration.Round(1e6))
		return all, writes
	}

	if _, writes := pass(e, "first pass"); writes != 3*n+2 {
		t.Fatalf("first pass: %d writes, want %d (create, traits, inventories per node; the custom class and trait)", writes, 3*n+2)
	}
	checkNode(t, f.srv, nodeUUID(21, 0), 0)
	checkNode(t, f.srv, nodeUUID(21, 1), 1) // maintenance
	checkNode(t, f.srv, nodeUUID(21, 3), 1) // cleaning

	if all, writes := pass(e, "idle pass"); all > idleBudget || writes != 0 {
		t.Fatalf("idle pass: %d requests, %d writes; want <= %d and 0", all, writes, idleBudget)
	}

	before := generations(t, f.srv)
	var moved []string
	for i := 0; len(moved) < changed; i++ {
		if u := nodeUUID(21, i); i%100 == 0 || i%100 > 5 {
			double.Update(u, func(nd *ironictest.Node) { nd.ProvisionState = "cleaning" })
			moved = append(moved, u)
		}
	}
	if all, writes := pass(e, "1% change pass"); all > idleBudget+changed || writes != changed {
		t.Fatalf("change pass: %d requests, %d writes; want <= %d and %d", all, writes, idleBudget+changed, changed)
	}
	checkTouched(t, before, generations(t, f.srv), moved)
	checkNode(t, f.srv, moved[0], 1)
	checkNode(t, f.srv, moved[changed-1], 1)

	// A restart with the state file checks its restored cache with one
	// list; a fresh process without one reads every node once. Neither
	// writes.
	restarted := newEnv(t, f.url, ironicFleet, withState)
	if all, writes := pass(restarted, "idle pass, restarted agent"); writes != 0 || all > idleBudget {
		t.Fatalf("restarted agent's idle pass: %d requests, %d writes; want <= %d and 0", all, writes, idleBudget)
	}
	cold := newEnv(t, f.url, ironicFleet, noRefresh)
	if all, writes := pass(cold, "idle pass, fresh agent"); writes != 0 || all > idleBudget+2*n {
		t.Fatalf("fresh agent's idle pass: %d requests, %d writes; want <= %d and 0", all, writes, idleBudget+2*n)
	}
}

// generations lists every provider's generation, by uuid.
func generations(t *testing.T, srv *placementtest.Server) map[string]int {
	t.Helper()
	var doc struct {
		Providers []struct {
			UUID       string `json:"uuid"`
			Generation int    `json:"generation"`
		} `json:"resource_providers"`
	}
	if err := json.Unmarshal(srv.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers", "1.39", nil), &doc); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int, len(doc.Providers))
	for _, p := range doc.Providers {
		out[p.UUID] = p.Generation
	}
	return out
}

// checkTouched: exactly the moved providers' generations went up, by one
// write each; every other provider is as it was.
func checkTouched(t *testing.T, before, after map[string]int, moved []string) {
	t.Helper()
	want := map[string]bool{}
	for _, u := range moved {
		want[u] = true
	}
	var wrong []string
	for u, g := range after {
		if d := g - before[u]; (want[u] && d != 1) || (!want[u] && d != 0) {
			wrong = append(wrong, u+": "+strconv.Itoa(before[u])+" -> "+strconv.Itoa(g))
		}
	}
	if len(after) != len(before) || len(wrong) > 0 {
		t.Fatalf("providers %d -> %d; generations that moved wrongly: %s", len(before), len(after), strings.Join(wrong, ", "))
	}
}
