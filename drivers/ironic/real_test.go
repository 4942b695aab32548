package ironic_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// realIronic pages at 10 nodes, so that every listing here takes several
// pages. Its tests run one at a time and delete their nodes.
var realIronic = ironictest.Shared(ironictest.Options{MaxLimit: 10})

func TestMain(m *testing.M) {
	os.Exit(svcproc.RunMain(m, realIronic))
}

// countingTransport counts the node list's pages, and lets a test act
// before one is sent.
type countingTransport struct {
	pages  atomic.Int64
	before func(r *http.Request) error
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/v1/nodes") {
		c.pages.Add(1)
	}
	if c.before != nil {
		if err := c.before(r); err != nil {
			return nil, err
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// available makes n available nodes: one enrolled, cleaned and powered
// off through the API, and copies of it (the listing is what these tests
// are about, and a copy takes no time where enrolling takes a second).
func available(t *testing.T, ir *ironictest.Ironic, n int, spec ironictest.NodeSpec) []string {
	t.Helper()
	uuids := ir.EnrollAvailable(t, 1, spec)
	return append(uuids, ir.CloneNodes(t, uuids[0], n-1)...)
}

func uuidsOf(tree *drivers.Tree) []string {
	var out []string
	for _, p := range tree.Providers {
		out = append(out, p.UUID)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestRealPaging: 25 nodes on pages of 10 (Ironic's max_limit) or of 4
// (page_size) are all reported, in as many pages as that takes; a shard
// is kept across pages; microversion latest is sent and accepted.
func TestRealPaging(t *testing.T) {
	ir := realIronic.Get(t)
	all := available(t, ir, 25, ironictest.NodeSpec{Name: "pg", ResourceClass: "gold"})
	var shard []string
	for i, u := range all {
		if i%2 == 0 {
			ir.Patch(t, u, ironictest.Op("add", "/shard", "s1"))
			shard = append(shard, u)
		}
	}
	tests := []struct {
		name  string
		opts  ironic.Options
		want  []string
		pages int64
	}{
		{"max_limit", ironic.Options{}, all, 3},
		{"page size 4", ironic.Options{PageSize: 4}, all, 7},
		{"latest", ironic.Options{Microversion: "latest"}, all, 3},
		// 13 nodes: one full page, then the rest.
		{"shard", ironic.Options{Shard: "s1", Microversion: "1.82"}, shard, 2},
		{"shard, page size 5", ironic.Options{Shard: "s1", Microversion: "latest", PageSize: 5}, shard, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := &countingTransport{}
			tc.opts.Endpoint, tc.opts.HTTPClient = ir.URL, &http.Client{Transport: ct}
			d, err := ironic.New(t.Context(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := d.Observe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := uuidsOf(tree); !slices.Equal(got, sorted(tc.want)) {
				t.Fatalf("%d nodes reported, want %d: %v", len(got), len(tc.want), got)
			}
			if got := ct.pages.Load(); got != tc.pages {
				t.Fatalf("%d pages read, want %d", got, tc.pages)
			}
		})
	}
}

// TestRealListingFailures: a page that fails fails the whole listing; a
// node deleted between two pages, whose uuid the next page is asked
// after, makes the listing start over rather than stop.
func TestRealListingFailures(t *testing.T) {
	ir := realIronic.Get(t)
	all := available(t, ir, 15, ironictest.NodeSpec{Name: "lf", ResourceClass: "gold"})
	newDriver := func(ct *countingTransport) *ironic.Driver {
		d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ir.URL, HTTPClient: &http.Client{Transport: ct}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("second page fails", func(t *testing.T) {
		ct := &countingTransport{}
		ct.before = func(r *http.Request) error {
			if r.URL.Query().Has("marker") {
				return errPageRefused
			}
			return nil
		}
		if tree, err := newDriver(ct).Observe(t.Context()); err == nil {
			t.Fatalf("Observe with page 2 failing = %d providers, want an error", len(tree.Providers))
		}
	})
	t.Run("marker deleted", func(t *testing.T) {
		ct := &countingTransport{}
		var deleted atomic.Value
		ct.before = func(r *http.Request) error {
			if m := r.URL.Query().Get("marker"); m != "" && deleted.Load() == nil {
				deleted.Store(m)
				ir.SetMaintenance(t, m, true)
				ir.Delete(t, m)
			}
			return nil
		}
		tree, err := newDriver(ct).Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		gone, _ := deleted.Load().(string)
		want := slices.DeleteFunc(slices.Clone(all), func(u string) bool { return u == gone })
		if got := uuidsOf(tree); gone == "" || !slices.Equal(got, sorted(want)) {
			t.Fatalf("deleted %q; reported %d: %v", gone, len(got), got)
		}
		// Page 1, page 2 after the deleted marker (404), then pages 1 and 2
		// again.
		if got := ct.pages.Load(); got != 4 {
			t.Fatalf("%d pages read, want 4", got)
		}
	})
}

var errPageRefused = &pageError{}

type pageError struct{}

func (*pageError) Error() string { return "page refused by the test" }

// TestRealNoResourceClass: a node whose resource class is cleared is not
// reported but kept (Nova leaves its provider as it is), and the warning
// names it once per change of the set, not every pass.
func TestRealNoResourceClass(t *testing.T) {
	ir := realIronic.Get(t)
	nodes := available(t, ir, 12, ironictest.NodeSpec{Name: "rc", ResourceClass: "gold"})
	core, logs := observer.New(zapcore.InfoLevel)
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ir.URL, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	// Takes every entry so far, and keeps the warnings.
	warnings := func() []observer.LoggedEntry {
		return slices.DeleteFunc(logs.TakeAll(), func(e observer.LoggedEntry) bool {
			return !strings.Contains(e.Message, "without a resource class")
		})
	}
	observe := func(step string, reported, kept int) *drivers.Tree {
		t.Helper()
		tree, err := d.Observe(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if len(tree.Providers) != reported || len(tree.Keep) != kept {
			t.Fatalf("%s: %d reported, %d kept; want %d, %d", step, len(tree.Providers), len(tree.Keep), reported, kept)
		}
		return tree
	}
	observe("all classified", 12, 0)
	ir.SetResourceClass(t, nodes[11], "")
	if tree := observe("node 11 cleared", 11, 1); tree.Keep[0] != nodes[11] {
		t.Fatalf("kept %v, want %s", tree.Keep, nodes[11])
	}
	w := warnings()
	if len(w) != 1 || !slices.Equal(w[0].ContextMap()["uuids"].([]any), []any{nodes[11]}) {
		t.Fatalf("warnings %v, want one naming %s", w, nodes[11])
	}
	observe("unchanged", 11, 1)
	if w := warnings(); len(w) != 0 {
		t.Fatalf("the same set warned again: %v", w)
	}
	ir.SetResourceClass(t, nodes[11], "gold")
	observe("class back", 12, 0)
	if got := logs.FilterMessageSnippet("every node has a resource class again").Len(); got != 1 {
		t.Fatalf("%d notes that every node has a class again, want 1", got)
	}
}

// TestRealConductorGroup: with a second conductor serving group rack1,
// the driver limited to rack1 reports that group's nodes only, over
// pages: the filter is the server's, and is kept on every page.
func TestRealConductorGroup(t *testing.T) {
	ir := realIronic.Get(t)
	ir.StartConductor(t, "rack1")
	rack := available(t, ir, 12, ironictest.NodeSpec{Name: "rack1", ResourceClass: "gold", ConductorGroup: "rack1"})
	other := available(t, ir, 11, ironictest.NodeSpec{Name: "default", ResourceClass: "gold"})
	ct := &countingTransport{}
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: ir.URL, ConductorGroup: "RACK1", HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := uuidsOf(tree); !slices.Equal(got, sorted(rack)) {
		t.Fatalf("reported %d nodes, want rack1's %d (and none of the other %d): %v", len(got), len(rack), len(other), got)
	}
	if got := ct.pages.Load(); got != 2 {
		t.Fatalf("%d pages, want 2", got)
	}
}
