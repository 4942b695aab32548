package agent_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
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

// TestRestartKeepsOwnedTraits: the state file keeps which traits the
// agent set, so that after a restart a trait the node no longer has is
// removed (unknown ownership would have to keep it), while an
// operator's trait stays; the restart's first pass reads no node.
func TestRestartKeepsOwnedTraits(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			nodes := goldNodes(32, 10, "")
			nodes[0].Traits = []string{"CUSTOM_RAID5"}
			double := ironictest.NewIronicDouble(t, nodes...)
			state := filepath.Join(t.TempDir(), "agent-state.json")
			withState := func(o *agent.Options) { o.StateFile = state; o.RefreshInterval = -1 }
			syncOK(t, newEnv(t, srv.URL, []drivers.Driver{ironicDriver(t, double)}, withState), "first pass")
			g, traits := srv.Traits(t, nodes[0].UUID)
			srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+nodes[0].UUID+"/traits", "1.39",
				map[string]any{"resource_provider_generation": g, "traits": append(traits, "HW_CPU_X86_AVX2")})

			double.Update(nodes[0].UUID, func(n *ironictest.Node) { n.Traits = nil })
			r := syncOK(t, newEnv(t, srv.URL, []drivers.Driver{ironicDriver(t, double)}, withState), "after a restart")
			if r.Requests.Read > 4 || r.Reread["generation"] != 1 || r.CacheHits != 9 {
				t.Fatalf("restart's first pass: %+v, re-read %v, cache hits %d; want node 0 alone re-read (the operator moved it)",
					r.Requests, r.Reread, r.CacheHits)
			}
			if _, traits := srv.Traits(t, nodes[0].UUID); slices.Contains(traits, "CUSTOM_RAID5") || !slices.Contains(traits, "HW_CPU_X86_AVX2") {
				t.Fatalf("traits after the restart's pass: %v; want CUSTOM_RAID5 removed, HW_CPU_X86_AVX2 kept", traits)
			}
		})
	}
}
