package reconciler

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
	"github.com/placement-syncd/placement-syncd/testkit/novatest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAudit_JobRealNova runs the audit job, set to delete, against the
// real nova-api and both its cell databases: with cell2 unreadable the
// run is partial, deletes nothing and leaves the orphan gauge unset;
// readable again, the run deletes exactly the two orphans (not the
// instances of either cell nor the destroyed one) and the gauges hold
// the findings by kind.
func TestAudit_JobRealNova(t *testing.T) {
	ctx := context.Background()
	n := freshNova(t)
	nodes, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "job1", Version: 73}, novatest.Compute{Cell: "cell2", Host: "job2", Version: 73})
	if err != nil {
		t.Fatal(err)
	}
	live1, live2, gone := "b0d10001-0000-4000-8000-000000000001", "b0d10001-0000-4000-8000-000000000002", "b0d10de1-0000-4000-8000-000000000001"
	orphans := []string{"b0d1000f-0000-4000-8000-000000000001", "b0d1000f-0000-4000-8000-000000000002"}
	if err := n.AddInstances(ctx, []novatest.Instance{
		{UUID: live1, Cell: "cell1", Project: "p", User: "u", Host: "job1", Node: "job1"},
		{UUID: live2, Cell: "cell2", Project: "p", User: "u", Host: "job2", Node: "job2"},
		{UUID: gone, Cell: "cell2", Project: "p", User: "u", Host: "job2", Node: "job2", Deleted: true},
	}, nil); err != nil {
		t.Fatal(err)
	}
	srv := placementtest.StartOurs(t, placementtest.Options{})
	for i, host := range []string{"job1", "job2"} {
		node := nodes[host][0]
		srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"uuid": node, "name": host})
		srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+node+"/inventories", "1.39", map[string]any{"resource_provider_generation": 0,
			"inventories": map[string]any{"VCPU": map[string]any{"total": 16}}})
		srv.Allocate(t, []string{live1, live2}[i], node, map[string]int{"VCPU": 1})
		srv.Allocate(t, orphans[i], node, map[string]int{"VCPU": 1})
	}
	srv.Allocate(t, gone, nodes["job2"][0], map[string]int{"VCPU": 1})

	pc := &gophercloud.ProviderClient{}
	pc.SetToken(srv.Token)
	auditOpts := &AuditOptions{Placement: audit.NewPlacement(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(srv.URL)}),
		Nova:   []audit.Nova{realNovaAPI(n.Endpoint, novatest.Token), novaclient.CellDatabases{APIDatabase: n.APIDatabase}},
		Delete: true, MaxRemovals: removallimit.Limit{N: 50, Percent: true}}
	reg := prometheus.NewRegistry()
	r, err := New(Options{Placement: newEnv(t, placementtest.Ours).pl, JobOptions: map[string]any{JobAudit: auditOpts}, Jobs: map[string]string{JobAudit: "@every 1h"}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	holding := func() int {
		held := 0
		for _, c := range append([]string{live1, live2, gone}, orphans...) {
			if !strings.Contains(string(srv.MustDo(t, http.StatusOK, http.MethodGet, "/allocations/"+c, "1.39", nil)), `"allocations":{}`) {
				held++
			}
		}
		return held
	}

	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	rec, err := r.RunJob(ctx, JobAudit)
	t.Logf("cell2 down: %s %s", rec.Result, rec.Detail)
	if err != nil || !strings.Contains(rec.Detail, "Nova read in part, nothing deleted") || holding() != 5 {
		t.Fatalf("cell2 down: err %v, detail %q, %d of 5 consumers holding", err, rec.Detail, holding())
	}
	if err := n.Readable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	rec, err = r.RunJob(ctx, JobAudit)
	t.Logf("cells readable: %s %s", rec.Result, rec.Detail)
	if err != nil || rec.Changes != 2 || holding() != 3 {
		t.Fatalf("cells readable: err %v, %d deleted, %d of 3 consumers left", err, rec.Changes, holding())
	}
	for _, c := range orphans {
		if !strings.Contains(string(srv.MustDo(t, http.StatusOK, http.MethodGet, "/allocations/"+c, "1.39", nil)), `"allocations":{}`) {
			t.Errorf("orphan %s not deleted", c)
		}
	}
	const want = `
# HELP placement_syncd_audit_findings Findings of the last audit run by kind (orphaned_consumer, stale_provider, over_capacity, incomplete_consumer); orphans and stale providers count only when Nova was read in full.
# TYPE placement_syncd_audit_findings gauge
placement_syncd_audit_findings{kind="incomplete_consumer"} 0
placement_syncd_audit_findings{kind="orphaned_consumer"} 2
placement_syncd_audit_findings{kind="over_capacity"} 0
placement_syncd_audit_findings{kind="stale_provider"} 0
# HELP placement_syncd_audit_runs_total Audit runs by result (ok; partial: Nova read in part, nothing deleted; error: Placement or Nova not read at all, or deletes failed).
# TYPE placement_syncd_audit_runs_total counter
placement_syncd_audit_runs_total{result="error"} 0
placement_syncd_audit_runs_total{result="ok"} 1
placement_syncd_audit_runs_total{result="partial"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "placement_syncd_audit_findings", "placement_syncd_audit_runs_total"); err != nil {
		t.Fatal(err)
	}
}
