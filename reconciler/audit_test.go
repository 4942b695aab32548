package reconciler

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAudit_FreshWithoutLastModified: a consumer whose answer carries no
// time of change is fresh for the job until it has been seen for the
// grace period, and forgotten once gone; for the one-shot audit (no
// memory) it is never old enough to touch.
func TestAudit_FreshWithoutLastModified(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := &Auditor{Grace: 10 * time.Minute, Remember: true}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0); !fresh {
		t.Fatalf("first sight: not fresh (%s)", why)
	}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0.Add(9*time.Minute)); !fresh {
		t.Fatalf("after 9m: not fresh (%s)", why)
	}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0.Add(10*time.Minute)); fresh {
		t.Fatalf("after 10m: still fresh (%s)", why)
	}
	job.forget(map[string]bool{})
	if fresh, _ := job.fresh("c", ConsumerInfo{}, t0.Add(20*time.Minute)); !fresh {
		t.Fatal("a consumer gone and back is not seen anew")
	}
	cli := &Auditor{Grace: 10 * time.Minute}
	if fresh, _ := cli.fresh("c", ConsumerInfo{}, t0.Add(24*time.Hour)); !fresh {
		t.Fatal("without memory nor Last-Modified a consumer was judged old")
	}
	if fresh, _ := cli.fresh("c", ConsumerInfo{Changed: t0}, t0.Add(11*time.Minute)); fresh {
		t.Fatal("Last-Modified 11m ago with a 10m grace: fresh")
	}
}

// TestAudit_NovaConsumer: Nova's consumers by type, else by the classes
// they hold; another service's type is never Nova's.
func TestAudit_NovaConsumer(t *testing.T) {
	nodes := map[string]bool{"node": true}
	for _, c := range []struct {
		info ConsumerInfo
		want bool
	}{
		{ConsumerInfo{Type: "INSTANCE", Providers: map[string]map[string]int64{"x": {"CUSTOM_X": 1}}}, true},
		{ConsumerInfo{Type: "MIGRATION"}, true},
		{ConsumerInfo{Type: "BLAZAR_RESERVATION", Providers: map[string]map[string]int64{"node": {"VCPU": 1}}}, false},
		{ConsumerInfo{Providers: map[string]map[string]int64{"x": {"MEMORY_MB": 1}}}, true},
		{ConsumerInfo{Type: "unknown", Providers: map[string]map[string]int64{"node": {"CUSTOM_BAREMETAL_GOLD": 1}}}, true},
		{ConsumerInfo{Providers: map[string]map[string]int64{"child": {"CUSTOM_RESERVATION_1": 1}}}, false},
	} {
		if got := novaConsumer(c.info, nodes, nil); got != c.want {
			t.Errorf("novaConsumer(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
}

// TestAudit_DownCellRecords: at 2.69 Nova lists an instance of a cell it
// cannot reach with status UNKNOWN (a partial record; the real nova-api
// here answers 500 instead when the cell's database refuses access, see
// TestAudit_JobRealNova), and a compute of that cell likewise in
// os-services: the view is partial, naming both, and every page of the
// server list is followed.
func TestAudit_DownCellRecords(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("OpenStack-API-Version"); got != "compute "+NovaMicroversion {
			http.Error(w, "microversion "+got, http.StatusBadRequest)
			return
		}
		var doc map[string]any
		switch {
		case r.URL.Path == "/servers" && r.URL.Query().Get("marker") == "" && r.URL.Query().Get("deleted") == "":
			doc = map[string]any{"servers": []any{map[string]any{"id": "s1", "status": "ACTIVE"}},
				"servers_links": []any{map[string]any{"rel": "next", "href": "http://" + r.Host + "/servers?all_tenants=1&marker=s1"}}}
		case r.URL.Path == "/servers" && r.URL.Query().Get("marker") == "s1":
			doc = map[string]any{"servers": []any{map[string]any{"id": "s2", "status": statusUnknown}}}
		case r.URL.Path == "/servers":
			doc = map[string]any{"servers": []any{map[string]any{"id": "s3", "status": "DELETED"}}}
		case r.URL.Path == "/os-migrations":
			doc = map[string]any{"migrations": []any{map[string]any{"uuid": "m1", "status": "finished"}, map[string]any{"uuid": "m2", "status": "confirmed"}}}
		case r.URL.Path == "/os-hypervisors":
			doc = map[string]any{"hypervisors": []any{map[string]any{"id": "n1", "hypervisor_hostname": "h1"}}}
		case r.URL.Path == "/os-services":
			doc = map[string]any{"services": []any{map[string]any{"host": "h2", "binary": ComputeBinary, "status": statusUnknown}}}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer hs.Close()
	pc := &gophercloud.ProviderClient{}
	pc.SetToken("admin")
	v, err := NewNovaAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(hs.URL)}).AuditView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !v.Instances["s1"] || !v.Instances["s2"] || !v.Instances["s3"] || !v.Migrations["m1"] || v.Migrations["m2"] || !v.ComputeNodes["n1"] {
		t.Fatalf("view %+v: want s1-s3, m1 (finished: a resize to confirm) and not m2, n1", v)
	}
	if got := strings.Join(v.Partial, "\n"); len(v.Partial) != 2 || !strings.Contains(got, "1 server(s) listed with status UNKNOWN") || !strings.Contains(got, "nova-compute on h2") {
		t.Fatalf("partial = %q", got)
	}
}

// TestAudit_RunResults: a run is partial when Nova was read in part,
// an error when Nova or Placement could not be read at all; a refusal by
// the guard is a run that went as configured. Orphans and stale
// providers keep their last value when the run could not confirm them.
func TestAudit_RunResults(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	orphan := []Finding{{Kind: FindingOrphanedConsumer, Consumer: "c"}}
	m.observeAudit(&AuditResult{Findings: orphan}, nil)
	m.observeAudit(&AuditResult{Findings: orphan, Refused: "too many"}, ErrRefused)
	m.observeAudit(&AuditResult{Partial: []string{"cell2"}}, nil)
	m.observeAudit(&AuditResult{Partial: []string{"Nova not read"}, NovaUnread: true}, ErrNovaUnavailable)
	m.observeAudit(nil, ErrUnavailable)
	for result, want := range map[string]float64{AuditResultOK: 2, AuditResultPartial: 1, AuditResultError: 2} {
		if got := testutil.ToFloat64(m.auditRuns.WithLabelValues(result)); got != want {
			t.Errorf("runs{result=%s} = %v, want %v", result, got, want)
		}
	}
	if got := testutil.ToFloat64(m.auditFindings.WithLabelValues(FindingOrphanedConsumer)); got != 1 {
		t.Errorf("orphans after partial runs = %v, want the last confirmed 1", got)
	}
}
