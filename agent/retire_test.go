package agent_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

func testRetire(t *testing.T, srv *placementtest.Server) {
	t.Run("vanished nodes", func(t *testing.T) { testRetireVanished(t, srv) })
	t.Run("empty or mass answer", func(t *testing.T) { testRetireGuard(t, srv) })
}

func groupDriver(t *testing.T, double *ironictest.IronicDouble, group string) *ironic.Driver {
	t.Helper()
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL, ConductorGroup: group})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func goldNodes(prefix, n int, group string) []ironictest.Node {
	var out []ironictest.Node
	for i := 1; i <= n; i++ {
		out = append(out, ironictest.Node{UUID: nodeUUID(prefix, i), ResourceClass: "baremetal-gold",
			ProvisionState: "available", PowerState: "power off", ConductorGroup: group})
	}
	return out
}

// providerExists reports whether the provider is in Placement.
func providerExists(t *testing.T, srv *placementtest.Server, uuid string) bool {
	t.Helper()
	code, body := srv.Do(t, http.MethodGet, "/resource_providers/"+uuid, "1.14", nil)
	if code != http.StatusOK && code != http.StatusNotFound {
		t.Fatalf("GET provider %s: %d %s", uuid, code, body)
	}
	return code == http.StatusOK
}

func syncOK(t *testing.T, e *env, step string) agent.Result {
	t.Helper()
	if err := e.agent.SyncOnce(t.Context()); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	r, _ := e.agent.LastResults()
	return r[0]
}

// testRetireVanished: nodes of group g1 deleted from Ironic are retired
// (deleted, or reserved while an instance's allocation remains, then
// deleted), also after an agent restart; g2's node, reported by another
// agent, is never touched.
func testRetireVanished(t *testing.T, srv *placementtest.Server) {
	nodes := goldNodes(20, 10, "g1")
	other := ironictest.Node{UUID: nodeUUID(20, 99), ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off", ConductorGroup: "g2"}
	double := ironictest.NewIronicDouble(t, append(nodes, other)...)
	state := filepath.Join(t.TempDir(), "agent-state.json")
	withState := func(o *agent.Options) { o.StateFile = state }
	e := newEnv(t, srv.URL, []drivers.Driver{groupDriver(t, double, "g1")}, withState)
	e2 := newEnv(t, srv.URL, []drivers.Driver{groupDriver(t, double, "g2")}, nil)
	syncOK(t, e, "first pass")
	syncOK(t, e2, "g2 first pass")

	double.Remove(nodes[0].UUID)
	if r := syncOK(t, e, "node 0 deleted"); r.Retired != 1 || providerExists(t, srv, nodes[0].UUID) {
		t.Fatalf("vanished node without allocations: retired %d, provider exists %v; want 1, false", r.Retired, providerExists(t, srv, nodes[0].UUID))
	}
	instance := nodeUUID(20, 1000)
	srv.Allocate(t, instance, nodes[1].UUID, map[string]int{goldRC: 1})
	double.Remove(nodes[1].UUID)
	for i := range 2 { // reported (reserved in full) while the allocation stays
		if r := syncOK(t, e, "node 1 deleted, allocated"); r.Retiring != 1 || r.Retired != 0 {
			t.Fatalf("pass %d: retiring %d retired %d, want 1 0", i, r.Retiring, r.Retired)
		}
		checkNode(t, srv, nodes[1].UUID, 1)
	}
	if got := e.counter(t, "placement_syncd_agent_providers_retiring", "driver", "ironic"); got != 1 {
		t.Fatalf("providers_retiring = %v, want 1", got)
	}
	srv.Deallocate(t, instance)
	if r := syncOK(t, e, "allocation gone"); r.Retired != 1 || providerExists(t, srv, nodes[1].UUID) {
		t.Fatalf("after the allocation went: retired %d, want 1 and the provider gone", r.Retired)
	}

	// Restart: the node deleted while the agent was down is still this
	// agent's to retire (the state file), g2's node is not.
	double.Remove(nodes[2].UUID)
	e3 := newEnv(t, srv.URL, []drivers.Driver{groupDriver(t, double, "g1")}, withState)
	if r := syncOK(t, e3, "after restart"); r.Retired != 1 || providerExists(t, srv, nodes[2].UUID) {
		t.Fatalf("after a restart: retired %d, want 1 and node 2 gone", r.Retired)
	}
	for _, n := range append(nodes[3:], other) {
		checkNode(t, srv, n.UUID, 0)
	}
}

// testRetireGuard: an empty Ironic answer, or more vanished nodes than
// agent.max_retirements, retires nothing, with a log line and a metric.
// Past the limit the vanished providers are reserved in full, and
// released by the pass that observes their nodes again; an empty answer
// reserves nothing.
func testRetireGuard(t *testing.T, srv *placementtest.Server) {
	nodes := goldNodes(21, 10, "g1")
	double := ironictest.NewIronicDouble(t, nodes...)
	e := newEnv(t, srv.URL, []drivers.Driver{groupDriver(t, double, "g1")}, nil)
	syncOK(t, e, "first pass")

	// Two nodes leave the agent's conductor group: 2 of 10 > 10%.
	away := func(group string) func(*ironictest.Node) {
		return func(n *ironictest.Node) { n.ConductorGroup = group }
	}
	double.Update(nodes[0].UUID, away("g9"))
	double.Update(nodes[1].UUID, away("g9"))
	for i := range 2 {
		r := syncOK(t, e, "two vanished")
		if r.RetireRefused != agent.RetireRefusedLimit || r.Retired != 0 || r.Held != 2 || r.Writes != 2*(1-i) {
			t.Fatalf("pass %d, 2 of 10 vanished: refused %q retired %d held %d writes %d; want %q 0 2 %d",
				i, r.RetireRefused, r.Retired, r.Held, r.Writes, agent.RetireRefusedLimit, 2*(1-i))
		}
		checkNode(t, srv, nodes[0].UUID, 1)
		checkNode(t, srv, nodes[1].UUID, 1)
	}
	if got := e.counter(t, "placement_syncd_agent_providers_held_refused", "driver", "ironic"); got != 2 {
		t.Fatalf("providers_held_refused = %v, want 2", got)
	}
	// They come back: released, and no longer held.
	double.Update(nodes[0].UUID, away("g1"))
	double.Update(nodes[1].UUID, away("g1"))
	if r := syncOK(t, e, "back"); r.RetireRefused != "" || r.Held != 0 || r.Writes != 2 {
		t.Fatalf("nodes back: refused %q held %d writes %d; want \"\" 0 2", r.RetireRefused, r.Held, r.Writes)
	}
	checkNode(t, srv, nodes[0].UUID, 0)
	checkNode(t, srv, nodes[1].UUID, 0)
	if got := e.counter(t, "placement_syncd_agent_providers_held_refused", "driver", "ironic"); got != 0 {
		t.Fatalf("providers_held_refused = %v after the nodes came back, want 0", got)
	}

	var all []string
	for _, n := range nodes {
		all = append(all, n.UUID)
	}
	double.Remove(all...)
	if r := syncOK(t, e, "empty answer"); r.RetireRefused != agent.RetireRefusedEmpty || r.Retired != 0 || r.Writes != 0 {
		t.Fatalf("empty answer: refused %q retired %d writes %d, want %q 0 0", r.RetireRefused, r.Retired, r.Writes, agent.RetireRefusedEmpty)
	}
	for _, n := range nodes {
		checkNode(t, srv, n.UUID, 0)
	}
	for reason, want := range map[string]float64{agent.RetireRefusedLimit: 2, agent.RetireRefusedEmpty: 1} {
		if got := e.counter(t, "placement_syncd_agent_retirements_refused_total", "reason", reason); got != want {
			t.Fatalf("retirements_refused_total{%s} = %v, want %v", reason, got, want)
		}
	}
	if n := e.logs.FilterMessage("vanished providers not retired; nothing deleted").Len(); n != 3 {
		t.Fatalf("%d refusal log lines, want 3", n)
	}
}
