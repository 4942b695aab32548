package novafull

import (
	"context"
	"net/http"
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
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// cleaningCycles is how many times each node is managed and provided
// (automated cleaning on fake hardware) while both writers run.
const cleaningCycles = 20

// writerInterval is how often each writer reads Ironic and reports: the
// agent's interval and the compute's update_resources_interval.
const writerInterval = 2 * time.Second

// TestNovaIronic_AgentBeside runs placement-syncd's agent (the ironic
// driver) beside Nova's ironic driver, both reading the same real Ironic
// and writing the same providers of one Placement (ours at 15.0.0),
// each through a recording proxy, over cleaningCycles cleaning cycles
// of two nodes. Each state a node passes through is held until both
// writers have read Ironic in it twice and Placement holds the reserved
// it asks for, so that every state reaches both. The counts per node and
// writer (inventory and trait writes, 409s, changes one writer undid of
// the other's) are logged for docs/nova.md.
func TestNovaIronic_AgentBeside(t *testing.T) {
	n := nova.Get(t)
	b := startBareMetal(t, n)
	p := placementtest.StartOurs(t, placementtest.Options{Release: release.V15})
	wl := newWriterLog()
	b.startIronicCompute(t, n, wl.proxy(t, "nova", p.URL))
	ag := startAgent(t, b.ir.URL, wl.proxy(t, "agent", p.URL))
	nodes := []string{b.gold, b.silver}
	c := &cycler{b: b, p: p, wl: wl, ag: ag}
	c.settle(t, b.gold, 0)
	c.settle(t, b.silver, 0)
	start := time.Now()
	t.Run("cycles", func(t *testing.T) {
		for _, node := range nodes {
			t.Run(c.name(node), func(t *testing.T) {
				t.Parallel()
				c.cycle(t, node)
			})
		}
	})
	t.Logf("%d cleaning cycles of %d nodes in %s", cleaningCycles, len(nodes), time.Since(start).Round(time.Millisecond))
	counts := wl.counts(nodes)
	for _, node := range nodes {
		t.Logf("%s: %s", c.name(node), counts[node])
	}
	for _, node := range nodes {
		checkWriters(t, c.name(node), counts[node])
	}
}

// checkWriters checks what the two writers did to one node over the
// cycles: every reserved change reached Placement, and neither undid the
// other's reserved.
func checkWriters(t *testing.T, name string, c *nodeCounts) {
	t.Helper()
	if w := c.invWrites["nova"] + c.invWrites["agent"]; w < 2*cleaningCycles {
		t.Errorf("%s: %d inventory writes over %d cycles, want at least %d (each reserved change)", name, w, cleaningCycles, 2*cleaningCycles)
	}
	for _, w := range []string{"nova", "agent"} {
		if c.reservedFlaps[w] != 0 {
			t.Errorf("%s: %s undid the other writer's reserved %d times", name, w, c.reservedFlaps[w])
		}
	}
}

// passClock records when the agent's passes ended.
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

// startAgent runs the agent with the ironic driver against Ironic at
// ironicURL and Placement at placementURL until the test's cleanup.
func startAgent(t *testing.T, ironicURL, placementURL string) *passClock {
	t.Helper()
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: placementURL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &passClock{}
	a, err := agent.New(agent.Options{
		Placement: pc, Drivers: []drivers.Driver{d}, Host: bmHost, Version: "test", Interval: writerInterval,
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
	b  *bmNodes
	p  *placementtest.Server
	wl *writerLog
	ag *passClock
}

func (c *cycler) name(node string) string {
	if node == c.b.gold {
		return "gold"
	}
	return "silver"
}

// cycle manages and provides the node cleaningCycles times, each state
// settled before the next.
func (c *cycler) cycle(t *testing.T, node string) {
	for range cleaningCycles {
		c.wl.nextPhase(node)
		c.b.ir.Manage(t, node)
		c.settle(t, node, 1)
		c.wl.nextPhase(node)
		c.b.ir.Provide(t, node)
		c.settle(t, node, 0)
	}
}

// settle waits until Nova's compute has run its periodic for the node
// twice (it reads the node's allocations each time, after reading
// Ironic), the agent has ended two passes, and Placement holds reserved
// as wanted; it fails the test after two minutes.
func (c *cycler) settle(t *testing.T, node string, want int) {
	t.Helper()
	since := time.Now()
	deadline := since.Add(2 * time.Minute)
	path := "/resource_providers/" + node + "/allocations"
	for {
		novaRuns, agentPasses := c.wl.seen("nova", http.MethodGet, path, since), c.ag.since(since)
		got := reservedOf(t, c.p, node)
		if novaRuns >= 2 && agentPasses >= 2 && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 2m: %d compute periodics, %d agent passes, reserved %d; want 2, 2 and %d", c.name(node), novaRuns, agentPasses, got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
