package agent_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// The real Ironic's size, for a run by hand: nodes enrolled by
// TestRealIronicPaging (35 by default) and [api] max_limit (10 by
// default, so that every listing pages; 0 is Ironic's 1000):
//
//	PLACEMENT_SYNCD_IRONIC_NODES=3000 PLACEMENT_SYNCD_IRONIC_MAX_LIMIT=0 \
//	    go test -run TestRealIronicPaging -timeout 60m -v ./agent/
const (
	IronicNodesEnv    = "PLACEMENT_SYNCD_IRONIC_NODES"
	IronicMaxLimitEnv = "PLACEMENT_SYNCD_IRONIC_MAX_LIMIT"
)

// realIronic is started by the first test that needs it. The tests that
// use it do not run in parallel with each other, and delete their nodes.
var realIronic *svcproc.Shared[*ironictest.Ironic]

func TestMain(m *testing.M) {
	o := ironictest.Options{MaxLimit: 10}
	if v := os.Getenv(IronicMaxLimitEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a number >= 0\n", IronicMaxLimitEnv, v)
			os.Exit(2)
		}
		o.MaxLimit = n
	}
	realIronic = ironictest.Shared(o)
	os.Exit(svcproc.RunMain(m, realIronic, svcproc.NoLeaks()))
}

func realIronicDriver(t *testing.T, ir *ironictest.Ironic) *ironic.Driver {
	t.Helper()
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ir.URL})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// realPair is one agent per Placement kind, all reading the same real
// Ironic, each counting the requests its server answered.
type realPair struct {
	kind string
	f    *fleet
	e    *env
}

func realPairs(t *testing.T, ir *ironictest.Ironic) []*realPair {
	t.Helper()
	noRefresh := func(o *agent.Options) { o.RefreshInterval = -1 }
	var out []*realPair
	for _, kind := range placementtest.Kinds() {
		f := startFleet(t, kind)
		out = append(out, &realPair{kind: kind, f: f, e: newEnv(t, f.url, []drivers.Driver{realIronicDriver(t, ir)}, noRefresh)})
	}
	return out
}

// pass runs one agent pass and returns the requests the server answered
// and how long the pass took.
func (p *realPair) pass(t *testing.T, what string) (all, writes int, took time.Duration) {
	t.Helper()
	p.f.reset()
	start := time.Now()
	if err := p.e.agent.SyncOnce(t.Context()); err != nil {
		t.Fatalf("%s, %s: %v", p.kind, what, err)
	}
	took = time.Since(start)
	counts := p.f.counts()
	all, writes = total(counts)
	r, _ := p.e.agent.LastResults()
	t.Logf("%s, %s: %d requests %v in %s; agent: %d providers, %d writes, re-read %v, %d retired",
		p.kind, what, all, counts, took.Round(time.Millisecond), r[0].Providers, r[0].Writes, r[0].Reread, r[0].Retired)
	return all, writes, took
}

// TestRealIronicPaging: every node of a real Ironic whose listing takes
// several pages is reported, and an unchanged pass then makes at most
// idleBudget requests to Placement and no write, against both servers.
func TestRealIronicPaging(t *testing.T) {
	ir := realIronic.Get(t)
	n := 35
	if v := os.Getenv(IronicNodesEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number >= 1", IronicNodesEnv, v)
		}
	}
	start := time.Now()
	// Enrolling and cleaning takes about a second a node; past the 35
	// of a CI run, copies of one enrolled node go straight into the
	// database.
	enrolled := min(n, 35)
	spec := ironictest.NodeSpec{Name: "paging", ResourceClass: "baremetal-gold", Traits: []string{"CUSTOM_RAID5"}}
	uuids := ir.EnrollAvailable(t, enrolled, spec)
	if n > enrolled {
		uuids = append(uuids, ir.CloneNodes(t, uuids[0], n-enrolled)...)
	}
	t.Logf("Ironic started in %s; %d nodes available (%d enrolled, cleaned, %d copies) in %s",
		ir.StartUp.Round(time.Millisecond), n, enrolled, n-enrolled, time.Since(start).Round(time.Millisecond))
	for _, p := range realPairs(t, ir) {
		p.pass(t, fmt.Sprintf("%d nodes, first pass", n))
		for _, u := range uuids {
			checkNode(t, p.f.srv, u, 0)
		}
		if all, writes, _ := p.pass(t, fmt.Sprintf("%d nodes, idle pass", n)); all > idleBudget || writes != 0 {
			t.Fatalf("%s: idle pass: %d requests, %d writes; want <= %d and 0", p.kind, all, writes, idleBudget)
		}
	}
}

// TestRealIronicStates drives nodes of the real Ironic through its API
// and checks, after each change and one pass, what both servers hold:
// the reserved Nova's _node_resources_unavailable and _used give, the
// provider of a node whose resource class was cleared left as it was
// (Nova's NoResourceClass), and a deleted node's provider retired.
func TestRealIronicStates(t *testing.T) {
	ir := realIronic.Get(t)
	ns := ir.EnrollAvailable(t, 4, ironictest.NodeSpec{Name: "states", ResourceClass: "baremetal-gold"})
	a, b, c, d := ns[0], ns[1], ns[2], ns[3]
	pairs := realPairs(t, ir)
	const gone = -1
	step := func(what string, want map[string]float64) {
		t.Helper()
		for _, p := range pairs {
			if _, _, took := p.pass(t, what); took <= 0 {
				t.Fatalf("%s: no pass", what)
			}
			for u, reserved := range want {
				if reserved == gone {
					if providerExists(t, p.f.srv, u) {
						t.Fatalf("%s, %s: provider %s still exists", p.kind, what, u)
					}
					continue
				}
				checkNode(t, p.f.srv, u, reserved)
			}
		}
	}
	step("all available", map[string]float64{a: 0, b: 0, c: 0, d: 0})
	ir.SetMaintenance(t, a, true)
	step("maintenance", map[string]float64{a: 1, b: 0})
	ir.SetMaintenance(t, a, false)
	step("maintenance off", map[string]float64{a: 0})
	ir.Manage(t, a)
	step("manageable", map[string]float64{a: 1})
	ir.Clean(t, a)
	step("manually cleaned, manageable", map[string]float64{a: 1})
	ir.FailCleaning(t, a)
	step("clean wait", map[string]float64{a: 1})
	ir.WaitState(t, a, "clean failed")
	step("clean failed", map[string]float64{a: 1})
	ir.Manage(t, a)
	ir.Patch(t, a, ironictest.Op("replace", "/deploy_interface", "fake"))
	ir.Provide(t, a)
	step("available again", map[string]float64{a: 0})
	ir.Deploy(t, a, nodeUUID(30, 1000))
	step("active with an instance", map[string]float64{a: 1})
	ir.Rescue(t, a)
	step("rescue", map[string]float64{a: 1})
	ir.Unrescue(t, a)
	ir.Undeploy(t, a)
	step("undeployed", map[string]float64{a: 0})
	ir.FailDeploy(t, b, nodeUUID(30, 1001))
	step("deploy failed", map[string]float64{a: 0, b: 1})
	ir.SetResourceClass(t, c, "")
	step("resource class cleared", map[string]float64{c: 0})
	ir.SetResourceClass(t, c, "baremetal-gold")
	ir.SetMaintenance(t, c, true)
	step("resource class back, maintenance", map[string]float64{c: 1})
	ir.Delete(t, d)
	step("deleted", map[string]float64{a: 0, b: 1, c: 1, d: gone})
}

// TestRealIronicMaxLimitShrinks: every node is reported while one page
// holds them all; once the operator lowers [api] max_limit (reloaded
// without a restart) the nodes past the first page are still read, and
// no provider is retired.
func TestRealIronicMaxLimitShrinks(t *testing.T) {
	ir := realIronic.Get(t)
	ns := ir.EnrollAvailable(t, 15, ironictest.NodeSpec{Name: "shrink", ResourceClass: "baremetal-gold"})
	ir.SetMaxLimit(t, 100)
	t.Cleanup(func() { ir.SetMaxLimit(t, 10) })
	pairs := realPairs(t, ir)
	for _, p := range pairs {
		p.pass(t, "one page")
	}
	ir.SetMaxLimit(t, 10)
	for _, p := range pairs {
		p.pass(t, "pages of 10")
		if r, _ := p.e.agent.LastResults(); r[0].Retired != 0 || r[0].Providers != len(ns) {
			t.Fatalf("%s: %d providers, %d retired; want %d, 0", p.kind, r[0].Providers, r[0].Retired, len(ns))
		}
		for _, u := range ns {
			checkNode(t, p.f.srv, u, 0)
		}
	}
}
