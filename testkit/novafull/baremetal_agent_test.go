package novafull

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// defaultCleaningCycles is how many times each node is managed and
// provided (automated cleaning on fake hardware) while both writers run,
// unless NOVA_CLEANING_CYCLES says otherwise: enough to see both
// behaviours in every run, where a cycle takes about half a minute.
// docs/nova.md's figures are from NOVA_CLEANING_CYCLES=20.
const defaultCleaningCycles = 3

// cleaningCycles is NOVA_CLEANING_CYCLES, or defaultCleaningCycles.
func cleaningCycles(t *testing.T) int {
	v := os.Getenv("NOVA_CLEANING_CYCLES")
	if v == "" {
		return defaultCleaningCycles
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("NOVA_CLEANING_CYCLES=%q: want a positive number of cycles", v)
	}
	return n
}

// writerInterval is how often each writer reads Ironic and reports: the
// agents' interval and the compute's update_resources_interval.
const writerInterval = 2 * time.Second

// besideHost is the ironic compute's host in TestNovaIronic_AgentBeside.
const besideHost = "bm-beside"

// The two ways the agent can stand beside Nova's ironic driver, each
// with its own agent and its own Ironic shard of two nodes.
const (
	shardDefer = "defer" // agent.ironic.defer_to_nova: true, the default
	shardWrite = "write" // defer_to_nova: false, the behaviour before it
)

// TestNovaIronic_AgentBeside runs Nova's ironic driver and
// placement-syncd's agent (the ironic driver) on the same real Ironic
// and the same Placement (ours at 15.0.0), each writer through a
// recording proxy, over cleaningCycles(t) cleaning cycles of four nodes:
// two read by an agent that defers to Nova (the default) and two by one
// that does not (defer_to_nova: false). Every state a node passes
// through is held until the compute has run its periodic twice, the
// node's agent has ended two passes, and Placement holds the reserved
// the state asks for. The counts per node and writer (inventory and
// trait writes, 409s, changes one writer undid of the other's) are
// logged for docs/nova.md, and checked: the deferring agent never writes
// Nova's providers, so Nova meets no 409 and nothing is undone; the
// other one fights Nova over OWNER_NOVA.
func TestNovaIronic_AgentBeside(t *testing.T) {
	n := nova.Get(t)
	began := time.Now()
	ir := ironictest.Start(t, ironictest.Options{})
	shards := map[string][]string{}
	for _, sh := range []string{shardDefer, shardWrite} {
		shards[sh] = ir.EnrollAvailable(t, 2, ironictest.NodeSpec{Name: "bm-" + sh, ResourceClass: "baremetal-gold", Shard: sh})
	}
	t.Logf("real Ironic started in %s; four nodes available in %s", ir.StartUp.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	p := placementtest.StartOurs(t, placementtest.Options{Release: release.V15})
	wl := newWriterLog()
	all := append(append([]string{}, shards[shardDefer]...), shards[shardWrite]...)
	// A host of its own: the scenario's host keeps the compute nodes of
	// its own nodes, and a restarted compute deletes the compute nodes
	// of nodes gone from Ironic (Nova 26.2 then fails to start when
	// their providers are not in the Placement now in use).
	startIronicCompute(t, n, ir, besideHost, wl.proxy(t, "nova", p.URL), all...)
	c := &cycler{ir: ir, p: p, wl: wl, clocks: map[string]*passClock{}, names: map[string]string{}, cycles: cleaningCycles(t)}
	for _, sh := range []string{shardDefer, shardWrite} {
		clock := startAgent(t, ir.URL, wl.proxy(t, "agent", p.URL), sh)
		for i, node := range shards[sh] {
			c.clocks[node], c.names[node] = clock, fmt.Sprintf("%s-%d", sh, i)
		}
	}
	for _, node := range all {
		c.settle(t, node, 0)
	}
	start := time.Now()
	c.cycle(t, all)
	t.Logf("%d cleaning cycles of %d nodes in %s", c.cycles, len(all), time.Since(start).Round(time.Millisecond))
	counts := wl.counts(all)
	for _, node := range all {
		t.Logf("%s: %s", c.names[node], counts[node])
	}
	for _, node := range shards[shardDefer] {
		checkDeferred(t, c.names[node], counts[node], c.cycles)
	}
	for _, node := range shards[shardWrite] {
		checkFight(t, c.names[node], counts[node], c.cycles)
	}
}

// checkDeferred checks a node whose agent defers to Nova: Nova wrote
// every reserved change, the agent nothing, and Nova met no 409.
func checkDeferred(t *testing.T, name string, c *nodeCounts, cycles int) {
	t.Helper()
	if c.invWrites["nova"] < 2*cycles || c.invWrites["agent"] != 0 || c.traitWrites["agent"] != 0 {
		t.Errorf("%s: inventory writes %v, trait writes %v; want at least %d of Nova's and none of the agent's",
			name, c.invWrites, c.traitWrites, 2*cycles)
	}
	if len(c.conflicts) != 0 || len(c.reservedFlaps) != 0 || len(c.ownerFlaps) != 0 {
		t.Errorf("%s: 409s %v, reserved flaps %v, OWNER_NOVA flaps %v; want none", name, c.conflicts, c.reservedFlaps, c.ownerFlaps)
	}
}

// checkFight checks a node whose agent writes whoever else does: every
// reserved change is made, and Nova, whose writes meet 409s after the
// agent's, re-reads the provider and drops OWNER_NOVA, which the agent
// puts back. Reserved changes undone are counted, not checked: Nova
// retries a write that met a 409 with the node it read before the
// change, so it undoes one only when its periodic straddles the change.
func checkFight(t *testing.T, name string, c *nodeCounts, cycles int) {
	t.Helper()
	if w := c.invWrites["nova"] + c.invWrites["agent"]; w < 2*cycles {
		t.Errorf("%s: %d inventory writes over %d cycles, want at least %d (each reserved change)", name, w, cycles, 2*cycles)
	}
	if c.conflicts["nova"] == 0 || c.ownerFlaps["agent"] == 0 {
		t.Errorf("%s: Nova's 409s %d, OWNER_NOVA put back by the agent %d; Nova 26.2 drops the traits it does not set, so want both > 0",
			name, c.conflicts["nova"], c.ownerFlaps["agent"])
	}
}

// passClock records when an agent's passes ended.
type passClock struct {
	mu   sync.Mutex
	ends []time.Time
}

func (pc *passClock) since(t0 time.Time) int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	n := 0
	for _, e := range pc.ends {
		if e.After(t0) {
			n++
		}
	}
	return n
}

// startAgent runs an agent with the ironic driver on shard's nodes of
// Ironic at ironicURL, deferring to Nova for shardDefer, against
// Placement at placementURL until the test's cleanup.
func startAgent(t *testing.T, ironicURL, placementURL, shard string) *passClock {
	t.Helper()
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ironicURL, Microversion: ironic.ShardMicroversion, Shard: shard, DeferToNova: shard == shardDefer})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: placementURL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &passClock{}
	a, err := agent.New(agent.Options{
		Placement: pc, Drivers: []drivers.Driver{d}, Host: besideHost, Version: "test", Interval: writerInterval,
		Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
		OnPass: func([]agent.Result) {
			clock.mu.Lock()
			clock.ends = append(clock.ends, time.Now())
			clock.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return clock
}

// cycler drives the nodes through cleaning cycles.
type cycler struct {
	ir     *ironictest.Ironic
	p      *placementtest.Server
	wl     *writerLog
	clocks map[string]*passClock // node → its agent's passes
	names  map[string]string
	cycles int // how many cleaning cycles cycle makes
}

// cycle manages and provides the nodes c.cycles times, all at once,
// each state settled before the next.
func (c *cycler) cycle(t *testing.T, nodes []string) {
	for range c.cycles {
		for _, step := range []struct {
			target, state string
			reserved      int
		}{{"manage", "manageable", 1}, {"provide", "available", 0}} {
			for _, node := range nodes {
				c.wl.nextPhase(node)
				c.ir.Provision(t, node, step.target, nil)
			}
			for _, node := range nodes {
				c.ir.WaitState(t, node, step.state)
			}
			for _, node := range nodes {
				c.settle(t, node, step.reserved)
			}
		}
	}
}

// settle waits until Nova's compute has run its periodic for the node
// twice (it reads the node's allocations each time, after reading
// Ironic), the node's agent has ended two passes, and Placement holds
// reserved as wanted; it fails the test after two minutes.
func (c *cycler) settle(t *testing.T, node string, want int) {
	t.Helper()
	since := time.Now()
	deadline := since.Add(2 * time.Minute)
	path := "/resource_providers/" + node + "/allocations"
	for {
		novaRuns, agentPasses := c.wl.seen("nova", http.MethodGet, path, since), c.clocks[node].since(since)
		got := reservedOf(t, c.p, node)
		if novaRuns >= 2 && agentPasses >= 2 && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 2m: %d compute periodics, %d agent passes, reserved %d; want 2, 2 and %d", c.names[node], novaRuns, agentPasses, got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
