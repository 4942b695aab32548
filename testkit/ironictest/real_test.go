package ironictest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

var realIronic = ironictest.Shared(ironictest.Options{MaxLimit: 10})

func TestMain(m *testing.M) {
	os.Exit(svcproc.RunMain(m, realIronic, svcproc.NoLeaks()))
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

// TestDoublePagesLikeIronic asks the real Ironic and the double holding
// the same nodes, in the same id order, the same listings: the status,
// the nodes and the next link (host aside) must agree.
func TestDoublePagesLikeIronic(t *testing.T) {
	ir := realIronic.Get(t)
	var uuids []string
	for i := range 13 {
		spec := ironictest.NodeSpec{Name: "cmp-" + strconv.Itoa(i), ResourceClass: "cmp"}
		if i%3 == 0 {
			spec.Shard = "s1"
		}
		uuids = append(uuids, ir.Enroll(t, spec))
	}
	var nodes []ironictest.Node
	for i, u := range uuids {
		n := ironictest.Node{UUID: u, ResourceClass: "cmp", ProvisionState: "enroll"}
		if i%3 == 0 {
			n.Shard = "s1"
		}
		nodes = append(nodes, n)
	}
	double := ironictest.NewIronicDouble(t, nodes...)
	double.SetMaxLimit(10)
	queries := []string{
		"resource_class=cmp", "resource_class=cmp&limit=3", "resource_class=cmp&limit=50",
		"resource_class=cmp&limit=4&marker=" + uuids[5], "resource_class=cmp&marker=" + uuids[12],
		"shard=s1&limit=2", "shard=s1&limit=2&marker=" + uuids[3], "limit=0",
		"marker=00000000-0000-4000-8000-000000000000", "fields=uuid", "limit=3&fields=uuid",
	}
	for _, q := range queries {
		// The driver's listing: selected fields of /v1/nodes.
		nodesQ := "fields=uuid,resource_class,traits&" + q
		if strings.Contains(q, "fields=") {
			nodesQ = q
		}
		compare(t, ir.URL+"/nodes/detail?"+q, double.URL+"/nodes/detail?"+q)
		compare(t, ir.URL+"/nodes?"+nodesQ, double.URL+"/nodes?"+nodesQ)
	}
	compare(t, ir.URL+"/nodes?limit=5", double.URL+"/nodes?limit=5")
}

// compare lists from the real Ironic and the double.
func compare(t *testing.T, real, double string) {
	t.Helper()
	rc, rn, rnext := listing(t, real)
	dc, dn, dnext := listing(t, double)
	if rc != dc || !slices.Equal(rn, dn) || rnext != dnext {
		t.Errorf("%s:\nreal   %d %v next %q\ndouble %d %v next %q", real, rc, rn, rnext, dc, dn, dnext)
	}
}

// listing is one node listing: the status, the node uuids (with their
// resource class, when asked for) and the next link without its scheme and host. (The tests that share the real
// Ironic run one at a time and delete their nodes.)
func listing(t *testing.T, u string) (int, []string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironictest.APIVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Nodes []struct {
			UUID          string `json:"uuid"`
			ResourceClass string `json:"resource_class"`
		} `json:"nodes"`
		Next string `json:"next"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for _, n := range page.Nodes {
		uuids = append(uuids, n.UUID+"/"+n.ResourceClass)
	}
	next := ""
	if page.Next != "" {
		u, err := url.Parse(page.Next)
		if err != nil {
			t.Fatal(err)
		}
		next = u.Path + "?" + u.RawQuery
	}
	return resp.StatusCode, uuids, next
}
