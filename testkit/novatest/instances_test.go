package novatest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// TestNova_Instances: instances written through Nova's objects are listed
// by the real nova-api for all tenants, a destroyed one only with
// deleted=1, and a migration by os-migrations with its uuid (2.59).
func TestNova_Instances(t *testing.T) {
	ctx := context.Background()
	n := nova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	const live, gone, mig = "11111111-1111-4111-8111-000000000001", "11111111-1111-4111-8111-000000000002", "22222222-2222-4222-8222-000000000001"
	err := n.AddInstances(ctx, []Instance{
		{UUID: live, Cell: "cell1", Project: "p1", User: "u1", Host: "h1", Node: "h1"},
		{UUID: gone, Cell: "cell2", Project: "p2", User: "u2", Host: "h2", Node: "h2", Deleted: true},
	}, []Migration{{UUID: mig, Instance: live, Cell: "cell1", Status: "migrating", Source: "h1", Dest: "h3"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(path, key string) []string {
		t.Helper()
		var doc map[string][]map[string]any
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.Endpoint+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Auth-Token", Token)
		req.Header.Set("OpenStack-API-Version", "compute 2.69")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatalf("%s: %d %v\n%s", path, resp.StatusCode, err, svcproc.Tail(n.Log(), 4000))
		}
		var out []string
		for _, s := range doc[key] {
			id, _ := s["id"].(string)
			if key == "migrations" {
				id, _ = s["uuid"].(string)
			}
			out = append(out, id)
		}
		return out
	}
	if got := ids("/servers?all_tenants=1", "servers"); !slices.Contains(got, live) || slices.Contains(got, gone) {
		t.Fatalf("servers = %v, want %s and not %s", got, live, gone)
	}
	if got := ids("/servers?all_tenants=1&deleted=1", "servers"); !slices.Contains(got, gone) || slices.Contains(got, live) {
		t.Fatalf("deleted servers = %v, want %s only", got, gone)
	}
	if got := ids("/os-migrations", "migrations"); !slices.Contains(got, mig) {
		t.Fatalf("migrations = %v, want %s", got, mig)
	}
}
