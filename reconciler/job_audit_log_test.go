package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAuditJob_LogLine: the audit job's "job run" log line carries the
// findings, counted by kind, and the first auditLogExamples of them, so
// that the journal says what was found without 'jobs list'.
func TestAuditJob_LogLine(t *testing.T) {
	ctx := context.Background()
	srv := placementtest.StartOurs(t, placementtest.Options{})
	const node, stale, live = "a0d10001-0000-4000-8000-000000000001", "a0d10001-0000-4000-8000-0000000000ff", "a0d1000a-0000-4000-8000-000000000001"
	for _, p := range []struct{ uuid, name string }{{node, "log1"}, {stale, "gone1"}} {
		srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"uuid": p.uuid, "name": p.name})
		srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+p.uuid+"/traits", "1.39",
			map[string]any{"resource_provider_generation": 0, "traits": []string{"COMPUTE_NODE"}})
	}
	srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+node+"/inventories", "1.39", map[string]any{"resource_provider_generation": 1,
		"inventories": map[string]any{"VCPU": map[string]any{"total": 64}}})
	srv.Allocate(t, live, node, map[string]int{"VCPU": 1})
	const orphans = 12
	for i := range orphans {
		srv.Allocate(t, fmt.Sprintf("a0d1000f-0000-4000-8000-%012d", i), node, map[string]int{"VCPU": 1})
	}
	novaFile := filepath.Join(t.TempDir(), "nova.json")
	if err := os.WriteFile(novaFile, []byte(`{"servers": [{"id": "`+live+`", "status": "ACTIVE"}],
		"hypervisors": [{"id": "`+node+`", "hypervisor_hostname": "log1", "service": {"host": "log1"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	pc := &gophercloud.ProviderClient{}
	pc.SetToken(srv.Token)
	client, err := placementclient.New(ctx, placementclient.Options{Endpoint: srv.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	r, err := New(Options{Placement: FromClient(client), Logger: zap.New(core), Jobs: map[string]string{JobAudit: "@every 1h"},
		JobOptions: map[string]any{JobAudit: &AuditOptions{Placement: audit.NewPlacement(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(srv.URL)}),
			Nova: []audit.Nova{novaclient.File{Path: novaFile}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunJob(ctx, JobAudit); err != nil {
		t.Fatal(err)
	}

	runs := logs.FilterMessage("job run").FilterField(zap.String("job", JobAudit)).All()
	if len(runs) != 1 {
		t.Fatalf("%d audit 'job run' lines, want 1", len(runs))
	}
	fields := runs[0].ContextMap()
	for key, want := range map[string]int64{"orphaned_consumers": orphans, "stale_providers": 1, "over_capacity": 0, "incomplete_consumers": 0,
		"unconfirmed": 0, "deleted": 0, "findings_not_listed": orphans + 1 - auditLogExamples} {
		if got, ok := fields[key].(int64); !ok || got != want {
			t.Errorf("log field %s = %v, want %d", key, fields[key], want)
		}
	}
	examples, _ := fields["findings"].([]any)
	if len(examples) != auditLogExamples {
		t.Fatalf("findings on the log line: %v, want the first %d", fields["findings"], auditLogExamples)
	}
	if first, _ := examples[0].(string); !strings.HasPrefix(first, audit.FindingOrphanedConsumer+": consumer a0d1000f-0000-4000-8000-000000000000 ") {
		t.Errorf("first finding on the log line: %q", first)
	}
}
