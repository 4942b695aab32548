package agent_test

import (
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestEfficiency measures the initial sync of 1000 bare-metal nodes and a
// steady-state resync against both servers: requests by method and time.
// The resync must make 0 writes. Figures are logged, not asserted.
func TestEfficiency(t *testing.T) {
	const n = 1000
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			proxy := placementtest.NewProxy(t, srv.URL)
			nodes := make([]ironictest.Node, n)
			for i := range nodes {
				nodes[i] = ironictest.Node{UUID: nodeUUID(7, i), ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off", Traits: []string{"CUSTOM_RAID5"}}
				if i%10 == 0 {
					nodes[i].ProvisionState = "clean wait"
				}
			}
			double := ironictest.NewIronicDouble(t, nodes...)
			e := newEnv(t, proxy.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
			ctx := t.Context()

			start := time.Now()
			if err := e.agent.SyncOnce(ctx); err != nil {
				t.Fatal(err)
			}
			initial, initialReqs := time.Since(start), proxy.Counts()
			if r, _ := e.agent.LastResults(); r[0].Created != n {
				t.Fatalf("created %d providers, want %d", r[0].Created, n)
			}
			proxy.Reset()
			start = time.Now()
			if err := e.agent.SyncOnce(ctx); err != nil {
				t.Fatal(err)
			}
			steady, steadyReqs := time.Since(start), proxy.Counts()
			if w := proxy.Writes(); w != 0 {
				t.Fatalf("steady-state resync made %d writes: %v", w, steadyReqs)
			}
			checkNode(t, srv, nodeUUID(7, 0), 1)
			checkNode(t, srv, nodeUUID(7, 1), 0)
			t.Logf("%s placement, %d nodes: initial sync %v, requests %v; steady-state resync %v, requests %v (0 writes)",
				kind, n, initial.Round(time.Millisecond), initialReqs, steady.Round(time.Millisecond), steadyReqs)
		})
	}
}
