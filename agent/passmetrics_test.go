package agent_test

import (
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestPassMetrics: a pass's requests by kind, cache hits and re-reads by
// reason, as metrics and in the pass's result, against both servers; with
// a refresh period shorter than a pass, every provider is re-read each
// pass (reason refresh) and nothing is written.
func TestPassMetrics(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			nodes := []ironictest.Node{
				{UUID: nodeUUID(22, 0), ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"},
				{UUID: nodeUUID(22, 1), ResourceClass: "baremetal-gold", ProvisionState: "clean wait", PowerState: "power off"},
				{UUID: nodeUUID(22, 2), ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off", Maintenance: true},
			}
			ds := []drivers.Driver{ironicDriver(t, ironictest.NewIronicDouble(t, nodes...))}
			e := newEnv(t, srv.URL, ds, nil)
			pass := func(e *env) agent.Result {
				t.Helper()
				if err := e.agent.SyncOnce(t.Context()); err != nil {
					t.Fatal(err)
				}
				r, _ := e.agent.LastResults()
				return r[0]
			}
			// Version discovery, one in_tree list per node (a small fleet),
			// then create, traits and inventories per node and the custom
			// class.
			if r := pass(e); r.Requests != (placementclient.Requests{List: 3, Read: 1, Write: 3*3 + 1}) || r.Created != 3 {
				t.Fatalf("first pass: %+v", r)
			}
			r := pass(e)
			if r.Requests != (placementclient.Requests{List: 3}) || r.CacheHits != 3 || len(r.Reread) != 0 {
				t.Fatalf("idle pass: %+v", r)
			}
			for kind, want := range map[string]float64{"list": 3, "read": 0, "write": 0} {
				if got := e.counter(t, "placement_syncd_agent_pass_requests", "driver", "ironic", "kind", kind); got != want {
					t.Errorf("pass_requests{kind=%s} = %v, want %v", kind, got, want)
				}
			}
			if got := e.counter(t, "placement_syncd_agent_cache_hits_total", "driver", "ironic"); got != 3 {
				t.Errorf("cache_hits_total = %v, want 3", got)
			}
			if got := e.counter(t, "placement_syncd_agent_providers_reread_total", "reason", "uncached"); got != 0 {
				t.Errorf("providers_reread_total{reason=uncached} = %v after a first pass that created every provider", got)
			}

			short := newEnv(t, srv.URL, ds, func(o *agent.Options) { o.RefreshInterval = time.Nanosecond })
			pass(short) // a fresh agent reads every provider once
			if got := short.counter(t, "placement_syncd_agent_providers_reread_total", "reason", "uncached"); got != 3 {
				t.Errorf("fresh agent: providers_reread_total{reason=uncached} = %v, want 3", got)
			}
			r = pass(short)
			if r.Reread["refresh"] != 3 || r.Requests.Write != 0 || r.Requests.Read != 2*3 || r.CacheHits != 0 {
				t.Fatalf("pass with the refresh due: %+v", r)
			}
			if got := short.counter(t, "placement_syncd_agent_providers_reread_total", "reason", "refresh"); got != 3 {
				t.Errorf("providers_reread_total{reason=refresh} = %v, want 3", got)
			}
		})
	}
}
