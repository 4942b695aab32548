package novaclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNovaFileAuditView: a Nova file's servers (live and deleted), the
// migrations in progress and the compute nodes make the view; UNKNOWN
// servers make it partial; a file without "servers" is an error, not a
// Nova without instances.
func TestNovaFileAuditView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nova.json")
	write := func(doc string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"servers": [{"id": "i1", "status": "ACTIVE"}, {"id": "i2", "status": "DELETED"}],
		"migrations": [{"uuid": "m1", "status": "migrating"}, {"uuid": "m2", "status": "confirmed"}, {"uuid": "m3", "status": "finished"}],
		"hypervisors": [{"id": "c0000000-0000-4000-8000-000000000001", "hypervisor_hostname": "h1", "service": {"host": "h1"}}]}`)
	v, err := File{Path: path}.Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !v.Instances["i1"] || !v.Instances["i2"] || len(v.Instances) != 2 {
		t.Errorf("instances %v, want i1 and i2", v.Instances)
	}
	if !v.Migrations["m1"] || !v.Migrations["m3"] || v.Migrations["m2"] {
		t.Errorf("migrations in progress %v, want m1 and m3 (finished still holds allocations), not m2", v.Migrations)
	}
	if !v.ComputeNodes["c0000000-0000-4000-8000-000000000001"] || len(v.Partial) != 0 {
		t.Errorf("compute nodes %v, partial %v", v.ComputeNodes, v.Partial)
	}

	write(`{"servers": [{"id": "i1", "status": "UNKNOWN"}], "hypervisors": []}`)
	if v, err := (File{Path: path}).Records(context.Background()); err != nil || len(v.Partial) != 1 {
		t.Errorf("an UNKNOWN server: partial %v (%v), want one reason", v.Partial, err)
	}

	write(`{"aggregates": [], "hypervisors": []}`)
	if _, err := (File{Path: path}).Records(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a file without servers: %v, want ErrUnavailable", err)
	}
}

// TestNovaFileAggregateMetadata: an aggregate's metadata (its zone, its
// tenants) is read as GET /os-aggregates answers it.
func TestNovaFileAggregateMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nova.json")
	doc := `{"aggregates": [{"uuid": "a0000000-0000-4000-8000-000000000001", "name": "az1", "hosts": ["h1"],
		"availability_zone": "az1", "metadata": {"availability_zone": "az1", "filter_tenant_id": "p1"}}], "hypervisors": []}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := File{Path: path}.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Aggregates) != 1 || st.Aggregates[0].Metadata["availability_zone"] != "az1" || st.Aggregates[0].Metadata["filter_tenant_id"] != "p1" {
		t.Errorf("aggregates %+v, want az1 with its zone and tenant", st.Aggregates)
	}
}
