package agent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

func testFaults(t *testing.T, srv *placementtest.Server) {
	t.Run("concurrent writer", func(t *testing.T) { testConcurrentWriter(t, srv) })
	t.Run("placement down", func(t *testing.T) { testPlacementDown(t, srv) })
	t.Run("ironic down", func(t *testing.T) { testIronicDown(t, srv) })
}

// testConcurrentWriter: another writer bumps the provider generation just
// before the agent's inventory PUT; the agent gets a 409, re-reads,
// retries, converges, and counts the conflict.
func testConcurrentWriter(t *testing.T, srv *placementtest.Server) {
	node := nodeUUID(3, 1)
	double := ironictest.NewIronicDouble(t, ironictest.Node{UUID: node, ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"})
	proxy := placementtest.NewProxy(t, srv.URL)
	e := newEnv(t, proxy.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	proxy.SetBefore(func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+node+"/inventories") {
			once.Do(func() {
				// An operator's trait write, straight to the server.
				g, _ := srv.Traits(t, node)
				srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+node+"/traits", "1.39",
					map[string]any{"resource_provider_generation": g, "traits": []string{"COMPUTE_NODE", "OWNER_NOVA", "HW_CPU_X86_AVX2"}})
			})
		}
	})
	double.Update(node, func(n *ironictest.Node) { n.Maintenance = true })
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatalf("pass with a concurrent writer: %v", err)
	}
	checkNode(t, srv, node, 1)
	if got := e.counter(t, "placement_syncd_agent_placement_conflicts_total", "op", "inventories"); got != 1 {
		t.Fatalf("conflicts{inventories} = %v, want 1", got)
	}
	if r, _ := e.agent.LastResults(); r[0].Conflicts != 1 {
		t.Fatalf("result conflicts = %d, want 1", r[0].Conflicts)
	}
	// The operator's trait is not the agent's: it stays.
	_, traits := srv.Traits(t, node)
	if !containsAll(traits, "HW_CPU_X86_AVX2", "OWNER_NOVA", "COMPUTE_NODE") {
		t.Fatalf("traits %v lost the operator's HW_CPU_X86_AVX2", traits)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// testPlacementDown: with Placement answering 503 and then dropping
// connections, Run fails passes, backs off, counts the errors and never
// reports success; when it returns, the next pass converges.
func testPlacementDown(t *testing.T, srv *placementtest.Server) {
	node := nodeUUID(4, 1)
	double := ironictest.NewIronicDouble(t, ironictest.Node{UUID: node, ResourceClass: "baremetal-gold", ProvisionState: "clean wait", PowerState: "power off"})
	proxy := placementtest.NewProxy(t, srv.URL)
	proxy.SetMode(placementtest.Unavailable)
	passes := make(chan []agent.Result, 100)
	e := newEnv(t, proxy.URL, []drivers.Driver{ironicDriver(t, double)}, func(o *agent.Options) {
		o.Interval = time.Hour // only backoff and Resync drive passes here
		o.BackoffBase = time.Millisecond
		o.OnPass = func(r []agent.Result) { passes <- r }
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.agent.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() agent.Result {
		t.Helper()
		select {
		case r := <-passes:
			return r[0]
		case <-time.After(30 * time.Second):
			t.Fatal("no pass within 30s")
		}
		return agent.Result{}
	}
	for i := 0; i < 3; i++ {
		if r := next(); !errors.Is(r.Err, placementclient.ErrUnavailable) {
			t.Fatalf("pass %d while down: err = %v", i, r.Err)
		}
	}
	proxy.SetMode(placementtest.Drop)
	if r := next(); !errors.Is(r.Err, placementclient.ErrUnavailable) {
		t.Fatalf("pass with dropped connections: err = %v", r.Err)
	}
	if got := e.counter(t, "placement_syncd_agent_placement_errors_total"); got < 4 {
		t.Fatalf("placement errors = %v, want >= 4", got)
	}
	if got := e.counter(t, "placement_syncd_agent_syncs_total", "result", "success"); got != 0 {
		t.Fatalf("successes while down = %v", got)
	}
	if _, lastOK := e.agent.LastResults(); !lastOK.IsZero() {
		t.Fatal("a pass was recorded as successful while Placement was down")
	}
	proxy.SetMode(placementtest.Pass)
	for {
		r := next()
		if r.Err == nil {
			break
		}
	}
	checkNode(t, srv, node, 1)
}

// testIronicDown: with the Ironic API failing, the pass fails and
// Placement is left exactly as it was (no writes at all).
func testIronicDown(t *testing.T, srv *placementtest.Server) {
	node := nodeUUID(5, 1)
	double := ironictest.NewIronicDouble(t, ironictest.Node{UUID: node, ResourceClass: "baremetal-gold", ProvisionState: "clean wait", PowerState: "power off"})
	proxy := placementtest.NewProxy(t, srv.URL)
	e := newEnv(t, proxy.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	gen, before := srv.Inventories(t, node)
	double.SetDown(true)
	proxy.Reset()
	err := e.agent.SyncOnce(ctx)
	if err == nil {
		t.Fatal("pass succeeded with the Ironic API down")
	}
	if proxy.Total() != 0 {
		t.Fatalf("the agent sent %v to Placement while Ironic was down", proxy.Counts())
	}
	gen2, after := srv.Inventories(t, node)
	if gen2 != gen || after[goldRC]["reserved"] != before[goldRC]["reserved"] {
		t.Fatalf("Placement changed: gen %d -> %d, %v -> %v", gen, gen2, before, after)
	}
	if got := e.counter(t, "placement_syncd_agent_syncs_total", "result", "source_error"); got != 1 {
		t.Fatalf("source errors = %v", got)
	}
}

// TestOldServer: against our server capped at 1.25, an unavailable node's
// inventory is deleted (never while allocated), logged once, and comes
// back when the node is available again.
func TestOldServer(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{MaxMicroversion: "1.25"})
	n1, n2, inst := nodeUUID(6, 1), nodeUUID(6, 2), nodeUUID(6, 1000)
	double := ironictest.NewIronicDouble(t,
		ironictest.Node{UUID: n1, ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"},
		ironictest.Node{UUID: n2, ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"},
	)
	e := newEnv(t, srv.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	checkNode(t, srv, n1, 0)
	// n2 gets an instance before going unavailable: its inventory is in
	// use and must not be deleted.
	srv.MustDo(t, http.StatusNoContent, http.MethodPut, "/allocations/"+inst, "1.25", map[string]any{
		"allocations": map[string]any{n2: map[string]any{"resources": map[string]int{goldRC: 1}}},
		"project_id":  "p", "user_id": "u",
	})
	for _, n := range []string{n1, n2} {
		double.Update(n, func(n *ironictest.Node) { n.ProvisionState = "cleaning" })
	}
	for i := 0; i < 3; i++ {
		if err := e.agent.SyncOnce(ctx); err != nil {
			t.Fatalf("pass %d: %v", i, err)
		}
	}
	if _, invs := srv.Inventories(t, n1); len(invs) != 0 {
		t.Fatalf("n1 inventory %v, want deleted on a 1.25 server", invs)
	}
	checkNode(t, srv, n2, 0) // kept: in use, and reserved == total is impossible at 1.25
	if n := e.logs.FilterMessageSnippet("older than microversion 1.26").Len(); n != 1 {
		t.Fatalf("fallback logged %d times, want once", n)
	}
	if got := e.counter(t, "placement_syncd_agent_inventory_fallback_deletes_total"); got != 1 {
		t.Fatalf("fallback deletes = %v, want 1", got)
	}
	double.Update(n1, func(n *ironictest.Node) { n.ProvisionState = "available" })
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	checkNode(t, srv, n1, 0)
}
