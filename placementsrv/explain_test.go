package placementsrv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/handlers"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

const explainRoute = "/_placement-syncd/explain/allocation_candidates"

// explainWorld makes cn1 (VCPU 4, OWNER_NOVA), cn2 (VCPU 4, reserved in
// full, OWNER_NOVA) and other (VCPU 4, no owner trait).
func explainWorld(t *testing.T, ts *testServer) {
	t.Helper()
	for i, p := range []struct {
		name     string
		reserved int
		owner    bool
	}{{"cn1", 0, true}, {"cn2", 4, true}, {"other", 0, false}} {
		u := fmt.Sprintf("00000000-0000-0000-0000-0000000000e%d", i)
		ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: fmt.Sprintf(`{"name":%q,"uuid":%q}`, p.name, u)})
		ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Version: "1.39",
			Body: fmt.Sprintf(`{"resource_provider_generation":0,"inventories":{"VCPU":{"total":4,"reserved":%d}}}`, p.reserved)})
		if p.owner {
			ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/traits", Version: "1.39",
				Body: `{"resource_provider_generation":1,"traits":["OWNER_NOVA"]}`})
		}
	}
}

func explainOf(t *testing.T, ts *testServer, query, version string) handlers.ExplainBody {
	t.Helper()
	r := ts.must(t, 200, call{Method: "GET", Path: explainRoute + "?" + query, Version: version})
	var body handlers.ExplainBody
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return body
}

// TestExplainRoute: the explain route answers an admin with counts that
// agree with the answer, and leaves /allocation_candidates byte for byte
// as it was.
func TestExplainRoute(t *testing.T) {
	ts := startTestServer(t)
	explainWorld(t, ts)
	cands := call{Method: "GET", Path: "/allocation_candidates?resources=VCPU:2", Version: "1.39"}
	before := ts.must(t, 200, cands).Body

	ex := explainOf(t, ts, "resources=VCPU:2", "1.39")
	if ex.Returned != 2 || ex.Microversion != "1.39" || ex.Prefilter {
		t.Errorf("returned %d at %s (pre-filter %v), want 2 at 1.39 without the pre-filter", ex.Returned, ex.Microversion, ex.Prefilter)
	}
	if len(ex.Groups) != 1 || len(ex.Groups[0].Classes) != 1 {
		t.Fatalf("groups %+v", ex.Groups)
	}
	if c := ex.Groups[0].Classes[0]; c.With != 3 || c.HeldBack != 1 || c.Fit != 2 {
		t.Errorf("VCPU count %+v, want 3 with it, 1 held back, 2 fit", c)
	}
	if len(ex.Misses) != 1 || !strings.Contains(ex.Misses[0].Reasons[0], "cn2: VCPU: held back: reserved == total (4)") {
		t.Errorf("misses %+v, want cn2 held back", ex.Misses)
	}

	full := explainOf(t, ts, "resources=VCPU:3&limit=1&explain_misses=0", "1.39")
	if full.Returned != 1 || full.Generated != 2 || len(full.Misses) != 0 {
		t.Errorf("limit=1: returned %d of %d, %d misses; want 1 of 2, none", full.Returned, full.Generated, len(full.Misses))
	}
	if last := full.Stages[len(full.Stages)-1]; last.Name != "limit=1" || last.Removed != 1 || last.Unit != "candidates" {
		t.Errorf("last stage %+v, want limit=1 removing 1 candidate", last)
	}
	none := explainOf(t, ts, "resources=VCPU:5", "1.29")
	if none.Returned != 0 || none.Emptied == "" || len(none.Misses) != 3 {
		t.Errorf("VCPU:5: returned %d, emptied %q, %d misses", none.Returned, none.Emptied, len(none.Misses))
	}
	if got := none.Misses[0].Reasons[0]; got != "cn1: VCPU: needs 5, free 4 (total 4 × 1.0 − reserved 0 − used 0)" {
		t.Errorf("nearest miss %q", got)
	}

	if after := ts.must(t, 200, cands).Body; !bytes.Equal(before, after) {
		t.Errorf("the answer changed after explain:\n%s\n%s", before, after)
	}
}

// TestExplainRoute_EveryMicroversion: at each microversion that has
// allocation candidates, the explanation counts what the answer holds.
func TestExplainRoute_EveryMicroversion(t *testing.T) {
	ts := startTestServer(t)
	explainWorld(t, ts)
	// A nested tree: before 1.29 a candidate from two of its providers
	// is dropped.
	const root, child = "00000000-0000-0000-0000-0000000000f0", "00000000-0000-0000-0000-0000000000f1"
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name":"cnx","uuid":"` + root + `"}`})
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name":"numax","uuid":"` + child + `","parent_provider_uuid":"` + root + `"}`})
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + root + "/inventories", Version: "1.39",
		Body: `{"resource_provider_generation":0,"inventories":{"MEMORY_MB":{"total":1024}}}`})
	ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + child + "/inventories", Version: "1.39",
		Body: `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":4}}}`})
	for minor := 10; minor <= 39; minor++ {
		v := fmt.Sprintf("1.%d", minor)
		for _, q := range []string{"resources=VCPU:2", "resources=VCPU:1&limit=1", "resources=VCPU:4", "resources=VCPU:1,MEMORY_MB:512"} {
			if minor < 16 && strings.Contains(q, "limit") {
				continue // limit came with 1.16
			}
			r := ts.must(t, 200, call{Method: "GET", Path: "/allocation_candidates?" + q, Version: v})
			var answer struct {
				AllocationRequests []any `json:"allocation_requests"`
			}
			if err := json.Unmarshal(r.Body, &answer); err != nil {
				t.Fatal(err)
			}
			ex := explainOf(t, ts, q, v)
			if ex.Returned != len(answer.AllocationRequests) || ex.Microversion != v {
				t.Errorf("%s at %s: explained %d at %s, answer has %d", q, v, ex.Returned, ex.Microversion, len(answer.AllocationRequests))
			}
		}
	}
}

// TestExplainRoute_BadQuery: a query /allocation_candidates refuses is
// refused the same way, at the same microversion.
func TestExplainRoute_BadQuery(t *testing.T) {
	ts := startTestServer(t)
	explainWorld(t, ts)
	for _, tc := range []struct{ query, version string }{
		{"resources=VCPU:x", "1.39"},
		{"resources=VCPU:1&bogus=1", "1.39"},
		{"resources=CUSTOM_NOPE:1", "1.39"},
		{"resources=VCPU:1&required=CUSTOM_NOPE", "1.39"},
		{"resourcesX=VCPU:1", "1.32"},
		{"resources1=VCPU:1&resources2=VCPU:1", "1.25"},
		{"resources=VCPU:1&required=in:A,!B", "1.39"},
		{"resources=VCPU:1", "1.9"},
	} {
		want := ts.do(t, call{Method: "GET", Path: "/allocation_candidates?" + tc.query, Version: tc.version})
		got := ts.do(t, call{Method: "GET", Path: explainRoute + "?" + tc.query, Version: tc.version})
		if want.Status/100 != 4 || got.Status != want.Status {
			t.Errorf("%s at %s: explain %d %s, candidates %d %s", tc.query, tc.version, got.Status, got.Body, want.Status, want.Body)
			continue
		}
		gd, gc := errorDetail(t, got)
		wd, wc := errorDetail(t, want)
		if gd != wd || gc != wc {
			t.Errorf("%s at %s: explain %s %q, candidates %s %q", tc.query, tc.version, gc, gd, wc, wd)
		}
	}
	r := ts.must(t, 400, call{Method: "GET", Path: explainRoute + "?resources=VCPU:1&explain_misses=many", Version: "1.39"})
	if d, _ := errorDetail(t, r); !strings.Contains(d, "explain_misses") {
		t.Errorf("explain_misses=many: %s", r.Body)
	}
}

// TestExplainRoute_Policy: admins only by default, even where a service
// token may list candidates; a policy file can open it.
func TestExplainRoute_Policy(t *testing.T) {
	for _, rel := range []release.Release{release.V8, release.V15} {
		ts := startServerWith(t, func(o *Options) { o.Release = rel })
		for _, h := range []map[string]string{
			{"X-Auth-Token": "user"},
			{"X-Auth-Token": "svc:p1", "X-Roles": "service"},
			{"X-Auth-Token": "reader", "X-Roles": "reader", "OpenStack-System-Scope": "all"},
		} {
			r := ts.must(t, 403, call{Method: "GET", Path: explainRoute + "?resources=VCPU:1", Version: "1.39", Headers: h})
			if !strings.Contains(string(r.Body), policy.Explain) {
				t.Errorf("%s %v: 403 without the rule's name: %s", rel, h, r.Body)
			}
		}
	}
}

// TestExplainRoute_Prefilter: the pre-filter applies as for the scheduler
// and its constraints are named as its own.
func TestExplainRoute_Prefilter(t *testing.T) {
	ts := startServerWith(t, func(o *Options) {
		o.OwnerNovaPrefilter, o.SchedulerUsers = PrefilterOn, []string{"nova"}
	})
	explainWorld(t, ts)
	ex := explainOf(t, ts, "resources=VCPU:1", "1.39")
	if !ex.Prefilter || ex.Returned != 1 {
		t.Fatalf("pre-filter %v, returned %d; want applied, 1 (cn1)", ex.Prefilter, ex.Returned)
	}
	st := ex.Stages[1]
	if st.Name != "root_required=OWNER_NOVA" || !st.Prefilter || st.Removed != 1 || st.Left != 2 {
		t.Errorf("stage %+v, want the pre-filter's root_required removing other", st)
	}
	if got := explainOf(t, ts, "resources=VCPU:1&explain_user=someone", "1.39"); got.Prefilter || got.Returned != 2 {
		t.Errorf("as someone: pre-filter %v, returned %d; want off, 2", got.Prefilter, got.Returned)
	}
	only := explainOf(t, ts, "resources=VCPU:1&in_tree=00000000-0000-0000-0000-0000000000e2", "1.39")
	if only.Returned != 0 || len(only.Blockers) == 0 {
		t.Fatalf("in_tree=other: returned %d, blockers %+v", only.Returned, only.Blockers)
	}
	var named bool
	for _, b := range only.Blockers {
		named = named || len(b.Constraints) == 1 && b.Constraints[0].Prefilter && b.Constraints[0].Text == "root_required=OWNER_NOVA"
	}
	if !named {
		t.Errorf("blockers %+v do not name the pre-filter's root_required", only.Blockers)
	}
}
