package agent_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// novaReports writes a node's provider as Nova's ironic driver does: its
// traits replaced by Nova's own (OWNER_NOVA dropped, the capability
// traits added) and its one unit reserved.
func novaReports(t *testing.T, srv *placementtest.Server, uuid string) {
	t.Helper()
	gen, _ := srv.Traits(t, uuid)
	srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+uuid+"/traits", "1.6", map[string]any{
		"resource_provider_generation": gen, "traits": []string{"COMPUTE_NODE", "COMPUTE_IMAGE_TYPE_RAW"},
	})
	reserveGold(t, srv, uuid)
}

// TestDeferToReporter: once another service's trait (DeferTo) is on a
// provider, the agent writes nothing to it, whatever it wants, and
// counts it deferred; once the trait is gone it writes the provider
// again. Without DeferTo (the old behaviour) it writes back at once.
func TestDeferToReporter(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			a, b := nodeUUID(31, 1), nodeUUID(31, 2)
			deferring, old := goldProvider(a), goldProvider(b)
			deferring.DeferTo = []string{"COMPUTE_IMAGE_TYPE_RAW"}
			d := &keepDriver{}
			d.set(drivers.Tree{Providers: []drivers.Provider{deferring, old}})
			e := newEnv(t, srv.URL, []drivers.Driver{d}, nil)
			syncOK(t, e, "first pass")
			novaReports(t, srv, a)
			novaReports(t, srv, b)
			// a is left as Nova wrote it; b is written back.
			if r := syncOK(t, e, "nova reports both"); r.Deferred != 1 || r.Writes != 2 {
				t.Fatalf("nova reports both: deferred %d, writes %d; want 1 and 2 (b's traits and inventory)", r.Deferred, r.Writes)
			}
			checkNode(t, srv, a, 1)
			checkNode(t, srv, b, 0)
			if _, tr := srv.Traits(t, a); slices.Contains(tr, "OWNER_NOVA") {
				t.Fatalf("a: OWNER_NOVA written back while deferred: %v", tr)
			}
			if _, tr := srv.Traits(t, b); !slices.Contains(tr, "OWNER_NOVA") {
				t.Fatalf("b: OWNER_NOVA not written back: %v", tr)
			}
			if r := syncOK(t, e, "idle"); r.Deferred != 1 || r.Writes != 0 {
				t.Fatalf("idle: deferred %d, writes %d; want 1 and 0", r.Deferred, r.Writes)
			}
			// The trait removed (Nova's compute gone, its provider
			// cleared by hand): a is the agent's again.
			gen, _ := srv.Traits(t, a)
			srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+a+"/traits", "1.6", map[string]any{
				"resource_provider_generation": gen, "traits": []string{"COMPUTE_NODE"},
			})
			if r := syncOK(t, e, "trait removed"); r.Deferred != 0 || r.Writes != 2 {
				t.Fatalf("trait removed: deferred %d, writes %d; want 0 and 2", r.Deferred, r.Writes)
			}
			checkNode(t, srv, a, 0)
		})
	}
}
