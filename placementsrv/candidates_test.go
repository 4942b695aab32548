package placementsrv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	acRoot  = "11111111-1111-4111-8111-111111111111"
	acChild = "22222222-2222-4222-8222-222222222222"
	acAgg   = "33333333-3333-4333-8333-333333333333"
)

// acFixture makes a compute root with VCPU and a child with a custom
// device class and trait.
func acFixture(t *testing.T) *testServer {
	t.Helper()
	ts := startTestServer(t)
	ctx := context.Background()
	st := ts.Store
	for _, p := range []store.NewProvider{{UUID: acRoot, Name: "cn"}, {UUID: acChild, Name: "dev", ParentUUID: acRoot}} {
		if _, err := st.CreateProvider(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	inv := func(class string, total int64) store.Inventory {
		return store.Inventory{ResourceClass: class, InventoryAmounts: store.InventoryAmounts{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1}}
	}
	if _, _, err := st.SetInventories(ctx, acRoot, 0, []store.Inventory{inv("VCPU", 4)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SetInventories(ctx, acChild, 0, []store.Inventory{inv("SRIOV_NET_VF", 2)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SetProviderTraits(ctx, acChild, 1, []string{"HW_NIC_OFFLOAD_GENEVE"}); err != nil {
		t.Fatal(err)
	}
	return ts
}

type acAnswer struct {
	AllocationRequests []json.RawMessage          `json:"allocation_requests"`
	ProviderSummaries  map[string]json.RawMessage `json:"provider_summaries"`
}

func getCandidates(t *testing.T, ts *testServer, version, query string) (acAnswer, testResponse) {
	t.Helper()
	r := ts.must(t, 200, call{Method: "GET", Path: "/allocation_candidates?" + query, Version: version})
	var a acAnswer
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return a, r
}

// TestCandidatesFollowWrites: an allocation acknowledged to a client is
// reflected by the very next candidates answer.
func TestCandidatesFollowWrites(t *testing.T) {
	ts := acFixture(t)
	if a, _ := getCandidates(t, ts, "1.39", "resources=VCPU:3"); len(a.AllocationRequests) != 1 {
		t.Fatalf("want 1 candidate, got %d", len(a.AllocationRequests))
	}
	ts.must(t, 204, call{Method: "PUT", Path: "/allocations/44444444-4444-4444-8444-444444444444", Version: "1.39",
		Body: `{"allocations":{"` + acRoot + `":{"resources":{"VCPU":2}}},"project_id":"p","user_id":"u","consumer_generation":null,"consumer_type":"INSTANCE"}`})
	if a, _ := getCandidates(t, ts, "1.39", "resources=VCPU:3"); len(a.AllocationRequests) != 0 {
		t.Fatalf("candidate survives an acknowledged allocation: %d", len(a.AllocationRequests))
	}
	if a, _ := getCandidates(t, ts, "1.39", "resources=VCPU:2"); len(a.AllocationRequests) != 1 {
		t.Fatalf("want 1 candidate for the remaining 2 VCPU, got %d", len(a.AllocationRequests))
	}
}

// TestCandidatesSummaryCacheFollowsWrites: provider summaries kept
// between answers on one snapshot are the same bytes as fresh ones, per
// microversion form, and a write is seen by the next answer.
func TestCandidatesSummaryCacheFollowsWrites(t *testing.T) {
	ts := acFixture(t)
	const q = "resources=VCPU:1"
	body := func(version string) string {
		t.Helper()
		_, r := getCandidates(t, ts, version, q)
		return string(r.Body)
	}
	check := func(used string) {
		t.Helper()
		for _, v := range []string{"1.39", "1.28", "1.29", "1.27"} {
			first := body(v) // the snapshot's first answers render afresh
			for i := 0; i < 2; i++ {
				if again := body(v); again != first {
					t.Fatalf("%s: answer %d differs:\n%s\n%s", v, i+2, again, first)
				}
			}
			if want := `"VCPU":{"capacity":4,"used":` + used + `}`; !strings.Contains(first, want) {
				t.Errorf("%s: missing %s in %s", v, want, first)
			}
			if hasRoot := strings.Contains(first, "root_provider_uuid"); hasRoot != (v >= "1.29") {
				t.Errorf("%s: root_provider_uuid present %v: %s", v, hasRoot, first)
			}
		}
	}
	check("0")
	ts.must(t, 204, call{Method: "PUT", Path: "/allocations/44444444-4444-4444-8444-444444444444", Version: "1.39",
		Body: `{"allocations":{"` + acRoot + `":{"resources":{"VCPU":2}}},"project_id":"p","user_id":"u","consumer_generation":null,"consumer_type":"INSTANCE"}`})
	check("2")
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + acRoot + "/traits", Version: "1.39",
		Body: `{"traits":["HW_CPU_X86_AVX2"],"resource_provider_generation":2}`})
	for i := 0; i < 2; i++ {
		if b := body("1.39"); !strings.Contains(b, `"traits":["HW_CPU_X86_AVX2"]`) {
			t.Errorf("trait change not in summaries: %s", b)
		}
	}
}

// TestCandidatesShapes checks the answer's form at the microversions where
// it changes.
func TestCandidatesShapes(t *testing.T) {
	ts := acFixture(t)
	cases := []struct {
		version, query string
		want, absent   []string
		cacheHeaders   bool
	}{
		{"1.10", "resources=VCPU:1", []string{`"allocations":[{"resource_provider":{"uuid":"` + acRoot + `"},"resources":{"VCPU":1}}]`, `"resources":{"VCPU":{"capacity":4,"used":0}}`},
			[]string{"traits", "root_provider_uuid", "mappings"}, false},
		{"1.12", "resources=VCPU:1", []string{`"allocations":{"` + acRoot + `":{"resources":{"VCPU":1}}}`}, []string{"mappings", "traits"}, false},
		{"1.15", "resources=VCPU:1", nil, nil, true},
		{"1.17", "resources=VCPU:1", []string{`"traits":[]`}, []string{"root_provider_uuid"}, true},
		// Below 1.27 only requested classes are summarized; from 1.29 the
		// child's VF comes along with its tree.
		{"1.29", "resources=VCPU:1", []string{`"parent_provider_uuid":"` + acRoot + `"`, `"SRIOV_NET_VF":{"capacity":2,"used":0}`, `"traits":["HW_NIC_OFFLOAD_GENEVE"]`}, nil, true},
		{"1.34", "resources=VCPU:1&resources_NIC=SRIOV_NET_VF:1&required_NIC=HW_NIC_OFFLOAD_GENEVE",
			[]string{`"mappings":{"":["` + acRoot + `"],"_NIC":["` + acChild + `"]}`}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			a, r := getCandidates(t, ts, c.version, c.query)
			if len(a.AllocationRequests) != 1 {
				t.Fatalf("want 1 candidate: %s", r.Body)
			}
			body := string(r.Body)
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("missing %s in %s", w, body)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(body, w) {
					t.Errorf("unexpected %s in %s", w, body)
				}
			}
			if got := r.Header.Get("Last-Modified") != "" && r.Header.Get("Cache-Control") == "no-cache"; got != c.cacheHeaders {
				t.Errorf("cache headers %v, want %v: %v", got, c.cacheHeaders, r.Header)
			}
		})
	}
}

// TestCandidatesBadQueries checks upstream's 400s, details and codes.
func TestCandidatesBadQueries(t *testing.T) {
	ts := acFixture(t)
	cases := []struct {
		name, version, query, detail, code string
	}{
		{"no group", "1.39", "", "There must be at least one resources or resources[$S] parameter.", apierror.CodeQueryMissingValue},
		{"no group before 1.36", "1.35", "group_policy=none", "At least one request group (`resources` or `resources{$S}`) is required.", apierror.CodeDefault},
		{"duplicate root_required", "1.39", "resources=VCPU:1&root_required=A&root_required=B", "Query parameter 'root_required' may be specified only once.", apierror.CodeQueryDuplicateKey},
		{"root_required conflict", "1.39", "resources=VCPU:1&root_required=HW_NIC_OFFLOAD_GENEVE,!HW_NIC_OFFLOAD_GENEVE", "Conflicting required and forbidden traits found in root_required: HW_NIC_OFFLOAD_GENEVE", apierror.CodeQueryBadValue},
		{"unknown class", "1.39", "resources=CUSTOM_NOPE:1", "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.", apierror.CodeDefault},
		{"unknown trait", "1.39", "resources=VCPU:1&required=CUSTOM_NOPE", "No such trait(s): CUSTOM_NOPE.", apierror.CodeDefault},
		{"any-of before 1.39", "1.38", "resources=VCPU:1&required=in:A,B", "only supported since microversion 1.39", apierror.CodeDefault},
		{"any-of with forbidden", "1.39", "resources=VCPU:1&required=in:A,!B", "does not support forbidden traits", apierror.CodeDefault},
		{"group_policy needed", "1.25", "resources1=VCPU:1&resources2=VCPU:1", `The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`, apierror.CodeDefault},
		{"conflicting traits", "1.39", "resources=VCPU:1&required=CUSTOM_A,!CUSTOM_A", "Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_A)", apierror.CodeDefault},
		{"empty same_subtree suffix", "1.36", "resources_A=VCPU:1&same_subtree=,_A", "Empty string (unsuffixed group) can not be specified in `same_subtree`", apierror.CodeQueryBadValue},
		{"resourceless outside same_subtree", "1.36", "resources=VCPU:1&required_B=CUSTOM_A", "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['_B'].", apierror.CodeQueryBadValue},
		{"unknown same_subtree suffix", "1.36", "resources_A=VCPU:1&same_subtree=_A,_Z", "Real suffixes should be specified in `same_subtree`: ['_Z'] not found in ['_A'].", apierror.CodeQueryBadValue},
		{"orphan traits", "1.35", "resources=VCPU:1&required1=CUSTOM_A", "Found the following orphaned traits keys: required1", apierror.CodeDefault},
		{"suffix before 1.25", "1.24", "resources1=VCPU:1", "Invalid query string parameters", apierror.CodeDefault},
		{"bad limit (no codes before 1.23)", "1.16", "resources=VCPU:1&limit=0", "Invalid query string parameters", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.must(t, 400, call{Method: "GET", Path: "/allocation_candidates?" + c.query, Version: c.version})
			detail, code := errorDetail(t, r)
			if !strings.Contains(detail, c.detail) {
				t.Errorf("detail %q does not contain %q", detail, c.detail)
			}
			if code != c.code {
				t.Errorf("code %q, want %q", code, c.code)
			}
		})
	}
	ts.must(t, 404, call{Method: "GET", Path: "/allocation_candidates?resources=VCPU:1", Version: "1.9"})
}

// TestCandidatesStreamedLargeAnswer: an answer past the streaming
// threshold arrives chunked, complete and byte-identical to the buffered
// rendering of the same result.
func TestCandidatesStreamedLargeAnswer(t *testing.T) {
	ts := startTestServer(t)
	ctx := context.Background()
	st := ts.Store
	const root = "44444444-4444-4444-8444-444444444444"
	if _, err := st.CreateProvider(ctx, store.NewProvider{UUID: root, Name: "wide"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.EnsureResourceClass(ctx, "CUSTOM_DEV"); err != nil {
		t.Fatal(err)
	}
	// 8 identical devices and 6 groups of one unit: 8*7*6*5*4*3 = 20160
	// candidates, about 12 MB: more than one streamed chunk.
	for i := 0; i < 8; i++ {
		u := fmt.Sprintf("55555555-5555-4555-8555-%012d", i)
		if _, err := st.CreateProvider(ctx, store.NewProvider{UUID: u, Name: fmt.Sprint("dev", i), ParentUUID: root}); err != nil {
			t.Fatal(err)
		}
		inv := store.Inventory{ResourceClass: "CUSTOM_DEV", InventoryAmounts: store.InventoryAmounts{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}
		if _, _, err := st.SetInventories(ctx, u, 0, []store.Inventory{inv}); err != nil {
			t.Fatal(err)
		}
	}
	query := "group_policy=none&resources1=CUSTOM_DEV:1&resources2=CUSTOM_DEV:1&resources3=CUSTOM_DEV:1&resources4=CUSTOM_DEV:1&resources5=CUSTOM_DEV:1&resources6=CUSTOM_DEV:1"
	a, r := getCandidates(t, ts, "1.39", query)
	if n := len(a.AllocationRequests); n != 20160 {
		t.Fatalf("%d candidates, want 20160", n)
	}
	if cl := r.Header.Get("Content-Length"); cl != "" {
		t.Errorf("streamed answer has Content-Length %s", cl)
	}
	if r.Header.Get("Last-Modified") == "" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("cache headers missing: %v", r.Header)
	}
	// The same request answered buffered must give the same bytes.
	snap, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	req, herr := candidates.ParseQuery(query, q, microversion.Max)
	if herr != nil {
		t.Fatal(herr)
	}
	res, err := candidates.Find(snap, req, candidates.Options{NestedAware: true})
	if err != nil {
		t.Fatal(err)
	}
	want := (&candidates.Renderer{}).Render(snap, &req, &res, microversion.Max)
	if !bytes.Equal(r.Body, want) {
		t.Errorf("streamed body (%d bytes) differs from buffered rendering (%d bytes)", len(r.Body), len(want))
	}
	// Each candidate's mappings, decoded, name the engine's providers.
	var got struct {
		AllocationRequests []struct {
			Mappings map[string][]string `json:"mappings"`
		} `json:"allocation_requests"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Candidates {
		m := got.AllocationRequests[i].Mappings
		if len(m) != len(req.Groups) {
			t.Fatalf("candidate %d: %d mappings, want %d", i, len(m), len(req.Groups))
		}
		for gi, g := range req.Groups {
			var wantUUIDs []string
			for _, p := range c.Mappings[gi] {
				wantUUIDs = append(wantUUIDs, snap.Providers[p].UUID)
			}
			if !slices.Equal(m[g.Suffix], wantUUIDs) {
				t.Fatalf("candidate %d group %q: mappings %v, want %v", i, g.Suffix, m[g.Suffix], wantUUIDs)
			}
		}
	}
}
