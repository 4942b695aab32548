package ironictest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/internal/ironictest"
)

var realIronic *ironictest.Shared

func TestMain(m *testing.M) {
	os.Exit(ironictest.RunMain(m, ironictest.Options{MaxLimit: 10}, &realIronic))
}

// TestRealPaging records how the real Ironic pages, which the double
// copies: a full page carries a top-level "next" link with sort_key,
// sort_dir, limit and marker (the last uuid), and drops every filter.
func TestRealPaging(t *testing.T) {
	ir := realIronic.Get(t)
	t.Logf("start-up %s", ir.StartUp)
	uuids := ir.EnrollAvailable(t, 12, ironictest.NodeSpec{Name: "page", ResourceClass: "gold"})
	code, body, err := ir.Do(t.Context(), http.MethodGet, "/v1/nodes/detail?limit=50&resource_class=gold", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("list: %d %v", code, err)
	}
	var page struct {
		Nodes []ironictest.NodeState `json:"nodes"`
		Next  string                 `json:"next"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Nodes) != 10 {
		t.Fatalf("%d nodes on the first page, want max_limit 10", len(page.Nodes))
	}
	next, err := url.Parse(page.Next)
	if err != nil {
		t.Fatal(err)
	}
	q := next.Query()
	if next.Path != "/v1/nodes/detail" || q.Get("limit") != "10" || q.Get("marker") != page.Nodes[9].UUID ||
		q.Get("sort_key") != "id" || q.Get("sort_dir") != "asc" || q.Has("resource_class") {
		t.Fatalf("next = %q", page.Next)
	}
	for _, u := range uuids {
		if n := ir.Get(t, u); n.ProvisionState != "available" || n.PowerState == nil {
			t.Fatalf("node %s: %+v", u, n)
		}
	}
}
