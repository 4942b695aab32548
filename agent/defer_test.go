package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

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
// The dry run, /v1/status and the providers_deferred gauge show the
// provider left alone while it is, and as the agent's again after.
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
			wantShown(t, e, "first pass", 0)
			novaReports(t, srv, a)
			novaReports(t, srv, b)
			// a is left as Nova wrote it; b is written back.
			wantPlan(t, e, "nova reports both", []string{leaveLine(a)}, restoreLines(b))
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
			wantShown(t, e, "nova reports both", 1)
			wantPlan(t, e, "idle", []string{leaveLine(a)}, nil)
			if r := syncOK(t, e, "idle"); r.Deferred != 1 || r.Writes != 0 {
				t.Fatalf("idle: deferred %d, writes %d; want 1 and 0", r.Deferred, r.Writes)
			}
			wantShown(t, e, "idle", 1)
			// The trait removed (Nova's compute gone, its provider
			// cleared by hand): a is the agent's again.
			gen, _ := srv.Traits(t, a)
			srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+a+"/traits", "1.6", map[string]any{
				"resource_provider_generation": gen, "traits": []string{"COMPUTE_NODE"},
			})
			wantPlan(t, e, "trait removed", nil, restoreLines(a))
			if r := syncOK(t, e, "trait removed"); r.Deferred != 0 || r.Writes != 2 {
				t.Fatalf("trait removed: deferred %d, writes %d; want 0 and 2", r.Deferred, r.Writes)
			}
			checkNode(t, srv, a, 0)
			wantShown(t, e, "trait removed", 0)
		})
	}
}

// leaveLine is the dry run's line for goldProvider(uuid) left to Nova.
func leaveLine(uuid string) string {
	return fmt.Sprintf("leave provider %q (%s) to the service that reports it: it carries COMPUTE_IMAGE_TYPE_RAW; no writes", "node-"+uuid, uuid)
}

// restoreLines are the dry run's writes that undo novaReports on
// goldProvider(uuid).
func restoreLines(uuid string) []string {
	name := fmt.Sprintf("%q (%s)", "node-"+uuid, uuid)
	return []string{"set traits of " + name + ": +OWNER_NOVA", "set inventories of " + name + ": " + goldRC + " total=1 reserved=0 max_unit=1"}
}

// wantPlan checks the dry run of e's next pass: exactly the deferred
// lines and the write lines given.
func wantPlan(t *testing.T, e *env, step string, deferred, writes []string) {
	t.Helper()
	plans := e.agent.DryRun(t.Context())
	if len(plans) != 1 || plans[0].Err != nil {
		t.Fatalf("%s: dry run %+v", step, plans)
	}
	if pl := plans[0]; !slices.Equal(pl.Deferred, deferred) || !slices.Equal(pl.Writes, writes) {
		t.Fatalf("%s: dry run left %q and wrote %q; want left %q and written %q", step, pl.Deferred, pl.Writes, deferred, writes)
	}
}

// wantShown checks that e's last pass shows n deferred providers in
// GET /v1/status and in the providers_deferred gauge.
func wantShown(t *testing.T, e *env, step string, n int) {
	t.Helper()
	h := httptest.NewServer(e.agent.LocalHandler("local-secret"))
	defer h.Close()
	req, _ := http.NewRequest(http.MethodGet, h.URL+"/v1/status", nil)
	req.Header.Set("X-Auth-Token", "local-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var status struct{ Drivers []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: GET /v1/status: %d, %v", step, resp.StatusCode, err)
	}
	// deferred is there when 0 too.
	if len(status.Drivers) != 1 || status.Drivers[0]["driver"] != "keep" || status.Drivers[0]["deferred"] != float64(n) {
		t.Fatalf("%s: /v1/status drivers %v; want keep with deferred %d", step, status.Drivers, n)
	}
	const gauge = "placement_syncd_agent_providers_deferred"
	if c, err := testutil.GatherAndCount(e.reg, gauge); err != nil || c != 1 {
		t.Fatalf("%s: %s has %d series (%v), want 1", step, gauge, c, err)
	}
	if got := e.counter(t, gauge, "driver", "keep"); got != float64(n) {
		t.Fatalf("%s: %s{driver=keep} = %v, want %d", step, gauge, got, n)
	}
}
