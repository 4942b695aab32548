package novaclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
)

// TestRecords_DownCell: at 2.69 Nova lists an instance of a cell it
// cannot reach with status UNKNOWN (a partial record; the real nova-api
// here answers 500 instead when the cell's database refuses access, see
// the reconciler's TestAudit_JobRealNova), and a compute of that cell likewise in
// os-services: the view is partial, naming both, and every page of the
// server list is followed.
func TestRecords_DownCell(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("OpenStack-API-Version"); got != "compute "+Microversion {
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
			doc = map[string]any{"services": []any{map[string]any{"host": "h2", "binary": heartbeat.ComputeBinary, "status": statusUnknown}}}
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
	v, err := NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(hs.URL)}).Records(context.Background())
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

// TestRecords_UncheckedCells: cell databases alone, with nothing to check
// the list against, make the audit's view partial (an instance of a cell
// left out would look orphaned, and a partial view deletes nothing);
// the operator's assertion or Nova's own list leave only what was not
// read.
func TestRecords_UncheckedCells(t *testing.T) {
	// Nothing listens there: the cell itself is unreadable either way.
	cells := []CellDatabase{{Name: "cell1", DSN: "mysql+pymysql://nova@127.0.0.1:1/nova_cell1"}}
	for _, tc := range []struct {
		name     string
		src      CellDatabases
		orphaned bool
	}{
		{"cells alone", CellDatabases{Cells: cells}, true},
		{"asserted complete", CellDatabases{Cells: cells, Complete: true}, false},
		{"with Nova's list", CellDatabases{Cells: cells, Nova: File{}}, false},
	} {
		v, err := tc.src.Records(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := strings.Join(v.Partial, "\n")
		if strings.Contains(got, "would look orphaned") != tc.orphaned || !strings.Contains(got, "cell cell1 database not readable") {
			t.Errorf("%s: partial %q; want the unreadable cell, and the unchecked list: %v", tc.name, got, tc.orphaned)
		}
	}
}
