package placementsrv

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/metrics/endpoint"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// startMetricsServer is startTestServer wired as main wires it: one
// process registry shared by the store and the API, served at /metrics
// on the API listener.
func startMetricsServer(t testing.TB) *testServer {
	t.Helper()
	reg := metrics.NewRegistry(metrics.BuildInfo{Version: "test", Commit: "abc", GoVersion: "go"})
	return startServerOpts(t,
		func(o *ledger.Options) { o.Registerer = reg },
		func(o *Options) {
			o.Registerer = reg
			o.MetricsHandler = endpoint.Handler(reg, nil)
		})
}

// scrape fetches /metrics without a token, as Prometheus does, checks it
// with the linter promtool uses, and parses it.
func (ts *testServer) scrape(t testing.TB) metricstest.Scrape {
	t.Helper()
	r := ts.must(t, http.StatusOK, call{Method: "GET", Path: metrics.Path, NoToken: true})
	return metricstest.Parse(t, r.Body)
}

const (
	metricsNode1   = "11111111-1111-4111-8111-111111111111"
	metricsNode2   = "22222222-2222-4222-8222-222222222222"
	metricsVM      = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	metricsBM      = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	metricsProject = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	metricsAgg     = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// runMetricsScenario drives a server through what an operator's
// dashboards follow: two hosts report inventory, two instances claim,
// two writers lose a generation race, a bare-metal node goes cleaning
// (its inventory fully reserved), both hosts join an aggregate, and a few
// requests go wrong.
func runMetricsScenario(t *testing.T, ts *testServer) {
	t.Helper()
	const v = "1.39"
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: v, Body: `{"name": "compute-1", "uuid": "` + metricsNode1 + `"}`})
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: v, Body: `{"name": "baremetal-1", "uuid": "` + metricsNode2 + `"}`})
	ts.must(t, 201, call{Method: "PUT", Path: "/resource_classes/CUSTOM_BAREMETAL_GOLD", Version: v})
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + metricsNode1 + "/inventories", Version: v, Body: `{"resource_provider_generation": 0, "inventories": {
		"VCPU": {"total": 16, "allocation_ratio": 4.0},
		"MEMORY_MB": {"total": 32768, "reserved": 512, "allocation_ratio": 1.5}}}`})
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + metricsNode2 + "/inventories", Version: v, Body: `{"resource_provider_generation": 0, "inventories": {
		"CUSTOM_BAREMETAL_GOLD": {"total": 1}}}`})

	claim := func(want int, consumer, provider, resources, consumerGen string) {
		ts.must(t, want, call{Method: "PUT", Path: "/allocations/" + consumer, Version: v, Body: `{"allocations": {"` + provider + `": {"resources": ` + resources + `}},
			"project_id": "` + metricsProject + `", "user_id": "` + metricsProject + `", "consumer_generation": ` + consumerGen + `, "consumer_type": "INSTANCE"}`})
	}
	claim(204, metricsVM, metricsNode1, `{"VCPU": 4, "MEMORY_MB": 2048}`, "null")
	claim(204, metricsBM, metricsNode2, `{"CUSTOM_BAREMETAL_GOLD": 1}`, "null")
	// A stale consumer generation and a stale provider generation: both
	// are generation conflicts.
	claim(409, metricsVM, metricsNode1, `{"VCPU": 8, "MEMORY_MB": 2048}`, "7")
	ts.must(t, 409, call{Method: "PUT", Path: "/resource_providers/" + metricsNode1 + "/inventories", Version: v, Body: `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 32}}}`})

	// The bare-metal node starts cleaning: reserved = total (1.26).
	gen := ts.must(t, 200, call{Method: "GET", Path: "/resource_providers/" + metricsNode2, Version: v}).JSON(t)["generation"]
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + metricsNode2 + "/inventories/CUSTOM_BAREMETAL_GOLD", Version: v,
		Body: fmt.Sprintf(`{"resource_provider_generation": %v, "total": 1, "reserved": 1}`, gen)})

	// Both hosts join a host aggregate, as the reconciler mirrors Nova's.
	for _, rp := range []string{metricsNode1, metricsNode2} {
		gen := ts.must(t, 200, call{Method: "GET", Path: "/resource_providers/" + rp, Version: v}).JSON(t)["generation"]
		ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + rp + "/aggregates", Version: v,
			Body: fmt.Sprintf(`{"resource_provider_generation": %v, "aggregates": [%q]}`, gen, metricsAgg)})
	}

	ts.must(t, 401, call{Method: "GET", Path: "/resource_providers", NoToken: true})
	ts.must(t, 200, call{Method: "GET", Path: "/resource_providers", Version: v})
	ts.must(t, 404, call{Method: "GET", Path: "/resource_providers/" + metricsNode1 + "/nothing-here", Version: v})
	ts.must(t, 405, call{Method: "PATCH", Path: "/resource_providers/" + metricsNode1, Version: v})
	ts.must(t, 405, call{Method: "BREW", Path: "/traits", Version: v})
	ts.must(t, 406, call{Method: "GET", Path: "/usages?project_id=" + metricsProject, Version: "1.99"})
}

// TestMetrics_Scenario asserts the values scraped over HTTP after the
// scenario: request counts by route template, generation conflicts, and
// the inventory families computed from the database.
func TestMetrics_Scenario(t *testing.T) {
	ts := startMetricsServer(t)
	runMetricsScenario(t, ts)
	s := ts.scrape(t)

	const (
		reqs = "placement_syncd_http_requests_total"
		dur  = "placement_syncd_http_request_duration_seconds"
	)
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{reqs, []string{"route=/resource_providers", "method=POST", "code=200"}, 2},
		{reqs, []string{"route=/resource_classes/{name}", "method=PUT", "code=201"}, 1},
		{reqs, []string{"route=/resource_providers/{uuid}/inventories", "method=PUT", "code=200"}, 2},
		{reqs, []string{"route=/resource_providers/{uuid}/inventories", "method=PUT", "code=409"}, 1},
		{reqs, []string{"route=/allocations/{consumer_uuid}", "method=PUT", "code=204"}, 2},
		{reqs, []string{"route=/allocations/{consumer_uuid}", "method=PUT", "code=409"}, 1},
		{reqs, []string{"route=/resource_providers/{uuid}/inventories/{resource_class}", "method=PUT", "code=200"}, 1},
		{reqs, []string{"route=/resource_providers", "method=GET", "code=401"}, 1},
		{reqs, []string{"route=/resource_providers", "method=GET", "code=200"}, 1},
		{reqs, []string{"route=unmatched", "method=GET", "code=404"}, 1},
		{reqs, []string{"route=/resource_providers/{uuid}", "method=PATCH", "code=405"}, 1},
		{reqs, []string{"route=/traits", "method=other", "code=405"}, 1},
		{reqs, []string{"route=/usages", "method=GET", "code=406"}, 1},
		{dur, []string{"route=/allocations/{consumer_uuid}", "method=PUT"}, 3},
		{dur, []string{"route=/resource_providers/{uuid}", "method=GET"}, 3},
		{reqs, []string{"route=/resource_providers/{uuid}/aggregates", "method=PUT", "code=200"}, 2},
		{"placement_syncd_http_requests_in_flight", nil, 0},

		// The stale provider generation is caught by the handler, the
		// stale consumer generation by the store's transaction.
		{"placement_syncd_http_generation_conflicts_total", []string{"route=/resource_providers/{uuid}/inventories"}, 1},
		{"placement_syncd_http_generation_conflicts_total", []string{"route=/allocations/{consumer_uuid}"}, 1},
		{"placement_syncd_store_generation_conflicts_total", nil, 1},
		{"placement_syncd_store_transaction_duration_seconds", []string{"result=conflict"}, 1},
		// 2 providers, 1 class, 3 inventory writes, 2 claims, 2 aggregate sets.
		{"placement_syncd_store_transaction_duration_seconds", []string{"result=committed"}, 10},

		{"placement_syncd_resource_providers", nil, 2},
		{"placement_syncd_aggregates", nil, 1},
		{"placement_syncd_resource_class_capacity", []string{"resource_class=VCPU"}, 64},
		{"placement_syncd_resource_class_capacity", []string{"resource_class=MEMORY_MB"}, (32768 - 512) * 1.5},
		{"placement_syncd_resource_class_capacity", []string{"resource_class=CUSTOM_BAREMETAL_GOLD"}, 0},
		{"placement_syncd_resource_class_used", []string{"resource_class=VCPU"}, 4},
		{"placement_syncd_resource_class_used", []string{"resource_class=MEMORY_MB"}, 2048},
		{"placement_syncd_resource_class_used", []string{"resource_class=CUSTOM_BAREMETAL_GOLD"}, 1},
		{"placement_syncd_resource_class_reserved", []string{"resource_class=MEMORY_MB"}, 512},
		{"placement_syncd_resource_class_reserved", []string{"resource_class=CUSTOM_BAREMETAL_GOLD"}, 1},

		{"openstack_placement_up", nil, 1},
		{"openstack_placement_resource_total", []string{"hostname=compute-1", "resourcetype=VCPU"}, 16},
		{"openstack_placement_resource_total", []string{"hostname=baremetal-1", "resourcetype=CUSTOM_BAREMETAL_GOLD"}, 1},
		{"openstack_placement_resource_reserved", []string{"hostname=baremetal-1", "resourcetype=CUSTOM_BAREMETAL_GOLD"}, 1},
		{"openstack_placement_resource_usage", []string{"hostname=compute-1", "resourcetype=MEMORY_MB"}, 2048},
		{"openstack_placement_resource_allocation_ratio", []string{"hostname=compute-1", "resourcetype=VCPU"}, 4},
		{"openstack_placement_resource_allocation_ratio", []string{"hostname=compute-1", "resourcetype=MEMORY_MB"}, 1.5},

		{"placement_syncd_build_info", []string{"version=test", "commit=abc", "goversion=go"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name+"{"+strings.Join(tt.labels, ",")+"}", func(t *testing.T) {
			got, ok := s.Value(tt.name, tt.labels...)
			if !ok {
				t.Fatalf("no such series in:\n%s", s.Grep(tt.name))
			}
			if got != tt.want {
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("bounded labels", func(t *testing.T) {
		uuidRE := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`)
		for _, mf := range s.Families {
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if uuidRE.MatchString(lp.GetValue()) {
						t.Errorf("%s has a uuid in label %s=%q", mf.GetName(), lp.GetName(), lp.GetValue())
					}
				}
			}
		}
	})
}

// TestMetrics_Families compares the names, types and label names of every
// family the Placement server exports with testdata/metrics.golden (run
// with -update to rewrite it): a renamed metric or label breaks
// dashboards, so it must show up in review. The Go runtime and process
// families depend on the platform and are left out.
func TestMetrics_Families(t *testing.T) {
	ts := startMetricsServer(t)
	runMetricsScenario(t, ts)
	s := ts.scrape(t)
	var lines []string
	for name, mf := range s.Families {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, l)
		}
		slices.Sort(names)
		lines = append(lines, fmt.Sprintf("%s %s {%s}", name, strings.ToLower(mf.GetType().String()), strings.Join(names, ",")))
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "metrics.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestMetrics_Families -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("exported families changed (run with -update if intended):\n got:\n%s\nwant:\n%s", got, want)
	}
}

// TestMetrics_MetricsEndpoint checks where /metrics is served: without a
// token, only for GET and HEAD, not counted as an API request; and
// nowhere when no handler is configured, as upstream.
func TestMetrics_MetricsEndpoint(t *testing.T) {
	ts := startMetricsServer(t)
	for _, method := range []string{"GET", "HEAD"} {
		r := ts.do(t, call{Method: method, Path: "/metrics", NoToken: true})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s /metrics: %d %s", method, r.Status, r.Header.Get("Content-Type"))
		}
	}
	ts.must(t, 404, call{Method: "POST", Path: "/metrics", Body: "{}"})
	s := ts.scrape(t)
	if got := s.Grep(`route="unmatched"`); strings.Count(got, "requests_total") != 1 {
		t.Errorf("only the POST should be counted:\n%s", got)
	}

	plain := startTestServer(t)
	plain.must(t, 404, call{Method: "GET", Path: "/metrics"})
}
