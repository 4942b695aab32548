package agent_test

import (
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/ironictest"
	"github.com/placement-syncd/placement-syncd/internal/placementtest"
)

// TestCacheFollowsPlacement, for a driver read from its cache (more trees
// than ListTreesMax): an idle pass asks Placement for its versions only;
// the cache drops a provider that left the tree; a provider deleted
// behind the agent's back is re-created by the next write to it (404,
// re-read, create).
func TestCacheFollowsPlacement(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			nodes := goldNodes(31, 4, "g1")
			double := ironictest.NewIronicDouble(t, nodes...)
			e := newEnv(t, srv.URL, []drivers.Driver{groupDriver(t, double, "g1")}, func(o *agent.Options) {
				o.ListTreesMax = 1
				o.RefreshInterval = -1
			})
			syncOK(t, e, "first pass")
			if r := syncOK(t, e, "idle pass"); r.Requests.Total() != 1 || r.Requests.Write != 0 || r.CacheHits != 4 {
				t.Fatalf("idle pass: %+v, want 1 request (versions) and 4 cache hits", r.Requests)
			}
			if got := e.counter(t, "placement_syncd_agent_cached_providers"); got != 4 {
				t.Fatalf("cached_providers = %v, want 4", got)
			}

			double.Update(nodes[3].UUID, func(n *ironictest.Node) { n.ConductorGroup = "g9" })
			if r := syncOK(t, e, "node 3 left"); r.Retired != 1 {
				t.Fatalf("node 3 left: retired %d, want 1", r.Retired)
			}
			if got := e.counter(t, "placement_syncd_agent_cached_providers"); got != 3 {
				t.Fatalf("cached_providers = %v after a node left, want 3", got)
			}

			srv.MustDo(t, http.StatusNoContent, http.MethodDelete, "/resource_providers/"+nodes[0].UUID, "1.14", nil)
			double.Update(nodes[0].UUID, func(n *ironictest.Node) { n.Maintenance = true })
			if r := syncOK(t, e, "node 0 deleted behind the agent"); r.Created != 1 || r.Conflicts != 1 {
				t.Fatalf("node 0 deleted behind the agent: created %d conflicts %d, want 1 1", r.Created, r.Conflicts)
			}
			checkNode(t, srv, nodes[0].UUID, 1)
			if r := syncOK(t, e, "idle again"); r.Requests.Total() != 1 || r.Requests.Write != 0 {
				t.Fatalf("idle pass after the re-create: %+v", r.Requests)
			}
		})
	}
}
