package novafull

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The bare-metal scenario's ironic compute host and nodes: gold is the one node of its resource
// class, the one that is cleaned and put in maintenance; silver stays
// available throughout, so that the scheduler has somewhere to go.
const (
	bmHost   = "bm-ironic"
	goldRC   = "CUSTOM_BAREMETAL_GOLD"
	silverRC = "CUSTOM_BAREMETAL_SILVER"
)

// bmNodes are the real Ironic's nodes shared by the bare-metal tests.
type bmNodes struct {
	ir           *ironictest.Ironic
	gold, silver string
	flavors      map[string]string // resource class → flavor id
}

// startBareMetal starts a real Ironic (fake hardware) for the test with
// an available gold and silver node, and the flavors asking for each.
func startBareMetal(t *testing.T, n *Nova) *bmNodes {
	t.Helper()
	began := time.Now()
	ir := ironictest.Start(t, ironictest.Options{})
	b := &bmNodes{ir: ir, flavors: map[string]string{}}
	b.gold = ir.EnrollAvailable(t, 1, ironictest.NodeSpec{Name: "bm-gold", ResourceClass: "baremetal-gold"})[0]
	b.silver = ir.EnrollAvailable(t, 1, ironictest.NodeSpec{Name: "bm-silver", ResourceClass: "baremetal-silver"})[0]
	for name, rc := range map[string]string{"bm-gold": goldRC, "bm-silver": silverRC} {
		id, err := n.BaremetalFlavor(t.Context(), name, rc)
		if err != nil {
			t.Fatal(err)
		}
		b.flavors[rc] = id
	}
	t.Logf("real Ironic started in %s; two nodes available in %s", ir.StartUp.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	return b
}

// startIronicCompute points Nova at placementURL and starts the ironic
// compute for Ironic's nodes, waiting for those named; the compute is
// stopped at the test's cleanup.
func startIronicCompute(t *testing.T, n *Nova, ir *ironictest.Ironic, host, placementURL string, nodes ...string) {
	t.Helper()
	if err := n.UsePlacement(placementURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.UsePlacement("") })
	t.Cleanup(func() {
		if err := n.ForceDown(context.Background(), host, true); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(n.StopComputes)
	start := time.Now()
	if err := n.StartIronicCompute(t.Context(), IronicCompute{Host: host, Endpoint: ir.URL, Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	t.Logf("ironic compute up, %d nodes reported, in %s", len(nodes), time.Since(start).Round(time.Millisecond))
}

// TestNovaScheduler_BareMetal runs Nova's scheduler with a nova-compute
// running Nova's own ironic driver against a real Ironic, against our
// Placement at 8.0.0 and 15.0.0 and the reference 8.0.0: a node that is
// cleaning, or manageable in maintenance, is never chosen, and the
// flavor only it fits fails with NoValidHost; once provided it is
// chosen, the server goes ACTIVE on it through Ironic's fake deploy, and
// its delete cleans the node and leaves no allocation. The outcomes must
// be the same for every Placement.
func TestNovaScheduler_BareMetal(t *testing.T) {
	n := nova.Get(t)
	b := startBareMetal(t, n)
	placements := placementsUnderTest()
	outcomes := map[string][]string{}
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			start := time.Now()
			s := &bmScenario{t: t, ctx: t.Context(), n: n, b: b, p: pl.start(t)}
			startIronicCompute(t, n, b.ir, bmHost, s.p.URL, b.gold, b.silver)
			s.run()
			outcomes[pl.name] = s.record
			t.Logf("%s: %d checks passed in %s", pl.name, len(s.record), time.Since(start).Round(time.Millisecond))
		})
	}
	sameAsReference(t, placements, outcomes)
}

// bmScenario is one run of the bare-metal scenario against one Placement.
type bmScenario struct {
	t      *testing.T
	ctx    context.Context
	n      *Nova
	b      *bmNodes
	p      *placementtest.Server
	record []string
}

// run is the scenario's steps.
func (s *bmScenario) run() {
	ir, gold := s.b.ir, s.b.gold
	s.reserved("both available", map[string]int{gold: 0, s.b.silver: 0})

	// Cleaning: the direct deploy interface's ramdisk never calls back,
	// so the node waits in "clean wait", then "clean failed".
	ir.Manage(s.t, gold)
	ir.FailCleaning(s.t, gold)
	s.reserved("gold cleaning", map[string]int{gold: 1})
	s.noValidHost("gold cleaning", goldRC)
	silver := s.active("gold cleaning", silverRC, s.b.silver)

	// Manageable again, and in maintenance.
	ir.WaitState(s.t, gold, "clean failed")
	ir.Manage(s.t, gold)
	ir.Patch(s.t, gold, ironictest.Op("replace", "/deploy_interface", "fake"))
	ir.SetMaintenance(s.t, gold, true)
	s.reserved("gold in maintenance", map[string]int{gold: 1})
	s.noValidHost("gold in maintenance", goldRC)

	// Provided: cleaned (fake) and available, so chosen.
	ir.SetMaintenance(s.t, gold, false)
	ir.Provide(s.t, gold)
	s.reserved("gold provided", map[string]int{gold: 0})
	server := s.active("gold provided", goldRC, gold)

	// Deleting tears the node down and cleans it: available again, and
	// no allocation left.
	for _, id := range []string{server, silver} {
		if err := s.n.Delete(s.ctx, id, 3*time.Minute); err != nil {
			s.t.Fatal(err)
		}
		s.allocations("deleted", id, "none")
	}
	ir.WaitState(s.t, gold, "available")
	ir.WaitState(s.t, s.b.silver, "available")
	s.reserved("servers deleted, nodes cleaned", map[string]int{gold: 0, s.b.silver: 0})
}

// reserved waits until each node's provider holds its one unit reserved
// as wanted (Nova's compute reports a change within its periodic),
// failing after two minutes, and records it.
func (s *bmScenario) reserved(step string, want map[string]int) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := map[string]int{}
		for u := range want {
			got[u] = reservedOf(s.t, s.p, u)
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: reserved %v, want %v\n%s", step, got, want, s.n.Logs())
		}
		time.Sleep(300 * time.Millisecond)
	}
	var parts []string
	for u, r := range want {
		parts = append(parts, fmt.Sprintf("%s=%d/1", s.name(u), r))
	}
	slices.Sort(parts)
	s.record = append(s.record, fmt.Sprintf("%s: reserved %s", step, strings.Join(parts, " ")))
}

// reservedOf is the reserved of the node's one inventory in p, -1
// without one.
func reservedOf(t *testing.T, p *placementtest.Server, node string) int {
	t.Helper()
	code, body := p.Do(t, http.MethodGet, "/resource_providers/"+node+"/inventories", "1.39", nil)
	if code != http.StatusOK {
		return -1
	}
	var out struct {
		Inventories map[string]struct {
			Reserved int `json:"reserved"`
		} `json:"inventories"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Inventories) != 1 {
		return -1
	}
	for _, inv := range out.Inventories {
		return inv.Reserved
	}
	return -1
}

// held says why Ironic holds the node back: "cleaning" (any of its
// cleaning states, which one depends on timing), or its provision state,
// and maintenance.
func (s *bmScenario) held(node string) string {
	n := s.b.ir.Get(s.t, node)
	state := n.ProvisionState
	if slices.Contains([]string{"cleaning", "clean wait", "clean failed"}, state) {
		state = "cleaning"
	}
	if n.Maintenance {
		state += ", maintenance"
	}
	return state
}

func (s *bmScenario) name(node string) string {
	if node == s.b.gold {
		return "gold"
	}
	return "silver"
}

// noValidHost boots the flavor of rc and checks that the server goes to
// ERROR for NoValidHost with no allocation; the server is deleted.
func (s *bmScenario) noValidHost(step, rc string) {
	s.t.Helper()
	id, err := s.n.Boot(s.ctx, "bm-"+strings.ToLower(rc), s.b.flavors[rc])
	if err != nil {
		s.t.Fatal(err)
	}
	srv, err := s.n.WaitServer(s.ctx, id, 2*time.Minute, "ERROR")
	if err != nil {
		s.t.Fatalf("%v\n%s", err, s.n.Logs())
	}
	if !srv.NoValidHost() {
		s.t.Fatalf("%s: boot of %s: ERROR with fault %q, want No valid host", step, rc, srv.FaultMessage())
	}
	s.record = append(s.record, fmt.Sprintf("%s: boot %s: NoValidHost (Ironic: %s)", step, rc, s.held(s.b.gold)))
	s.allocations(step, id, "none")
	if err := s.n.Delete(s.ctx, id, time.Minute); err != nil {
		s.t.Fatal(err)
	}
}

// active boots the flavor of rc, checks that it goes ACTIVE on node with
// its one unit allocated there, and returns its id.
func (s *bmScenario) active(step, rc, node string) string {
	s.t.Helper()
	id, err := s.n.Boot(s.ctx, "bm-"+strings.ToLower(rc), s.b.flavors[rc])
	if err != nil {
		s.t.Fatal(err)
	}
	srv, err := s.n.WaitServer(s.ctx, id, 3*time.Minute, "ACTIVE")
	if err != nil {
		s.t.Fatalf("%v\n%s", err, s.n.Logs())
	}
	if srv.Node != node {
		s.t.Fatalf("%s: server of %s ACTIVE on node %s, want %s", step, rc, srv.Node, node)
	}
	if got := s.b.ir.Get(s.t, node); got.InstanceUUID == nil || *got.InstanceUUID != id || got.ProvisionState != "active" {
		s.t.Fatalf("%s: node %s is %s with instance %v, want active with %s", step, node, got.ProvisionState, got.InstanceUUID, id)
	}
	s.record = append(s.record, fmt.Sprintf("%s: boot %s: ACTIVE on %s (Ironic: active)", step, rc, s.name(node)))
	s.allocations(step, id, fmt.Sprintf("%s:%s=1", s.name(node), rc))
	return id
}

// allocations checks a consumer's allocations, as "node:RC=n,…" or
// "none", and records them.
func (s *bmScenario) allocations(step, consumer, want string) {
	s.t.Helper()
	body := s.p.MustDo(s.t, http.StatusOK, http.MethodGet, "/allocations/"+consumer, "1.39", nil)
	var out struct {
		Allocations map[string]struct {
			Resources map[string]int `json:"resources"`
		} `json:"allocations"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		s.t.Fatal(err)
	}
	var parts []string
	for rp, a := range out.Allocations {
		for rc, n := range a.Resources {
			parts = append(parts, fmt.Sprintf("%s:%s=%d", s.name(rp), rc, n))
		}
	}
	slices.Sort(parts)
	got := strings.Join(parts, ",")
	if got == "" {
		got = "none"
	}
	if got != want {
		s.t.Fatalf("%s: allocations of %s: %s, want %s", step, consumer, got, want)
	}
	s.record = append(s.record, fmt.Sprintf("%s: allocations %s", step, got))
}
