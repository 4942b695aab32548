package difftest

import (
	"net/http"
	"strings"
	"testing"
)

func answer(status int, body string, hdr ...string) *Answer {
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	return &Answer{Status: status, Header: h, Body: []byte(body)}
}

func classesOf(ds []Diff) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Class())
	}
	return out
}

const (
	rpA = "a0000000-0000-4000-8000-000000000001"
	rpB = "b0000000-0000-4000-8000-000000000002"
)

func candidates(ars ...string) string {
	return `{"allocation_requests": [` + strings.Join(ars, ",") + `], "provider_summaries": {"` + rpA +
		`": {"resources": {"VCPU": {"capacity": 8, "used": 0}}}, "` + rpB + `": {"resources": {"DISK_GB": {"capacity": 10, "used": 0}}}}}`
}

var (
	arA  = `{"allocations": {"` + rpA + `": {"resources": {"VCPU": 1}}}}`
	arB  = `{"allocations": {"` + rpB + `": {"resources": {"DISK_GB": 1}}}}`
	arAB = `{"allocations": {"` + rpA + `": {"resources": {"VCPU": 1}}, "` + rpB + `": {"resources": {"DISK_GB": 1}}}}`
)

func TestCompareCandidatesAsSets(t *testing.T) {
	path := "/allocation_candidates?resources=VCPU:1"
	ref := answer(200, candidates(arA, arB, arAB), "Content-Type", "application/json")
	same := answer(200, candidates(arAB, arA, arB), "Content-Type", "application/json")
	if ds := Compare(path, ref, same, nil); len(ds) != 0 {
		t.Errorf("reordered candidates: %v", ds)
	}
	missing := answer(200, candidates(arA, arAB), "Content-Type", "application/json")
	ds := Compare(path, ref, missing, nil)
	if got := strings.Join(classesOf(ds), ";"); got != "body $.allocation_requests[*] missing-item" {
		t.Errorf("a candidate less: %q", got)
	}
}

// A limited answer may hold other candidates than the reference's, as
// long as each is one of the unlimited answer's and the count agrees.
func TestCompareLimitedCandidates(t *testing.T) {
	path := "/allocation_candidates?resources=VCPU:1&limit=1"
	unlimited := answer(200, candidates(arA, arB))
	ref := answer(200, candidates(arA))
	if ds := Compare(path, ref, answer(200, candidates(arB)), unlimited); len(ds) != 0 {
		t.Errorf("another candidate of the unlimited answer: %v", ds)
	}
	ds := Compare(path, ref, answer(200, candidates(arAB)), unlimited)
	if got := strings.Join(classesOf(ds), ";"); got != "body $.allocation_requests[*] ac-limit not-a-candidate" {
		t.Errorf("a candidate the unlimited answer lacks: %q", got)
	}
	ds = Compare(path, ref, answer(200, candidates(arA, arB)), unlimited)
	if got := strings.Join(classesOf(ds), ";"); got != "body $.allocation_requests ac-limit count" {
		t.Errorf("two candidates for limit=1: %q", got)
	}
}

func TestCompareReportsRealDifferences(t *testing.T) {
	ref := answer(400, `{"errors": [{"status": 400, "title": "Bad Request", "detail": "no", "code": "placement.undefined_code", "request_id": "req-1"}]}`,
		"Content-Type", "application/json", "OpenStack-API-Version", "placement 1.39")
	ours := answer(400, `{"errors":[{"status":400,"title":"Bad Request","detail":"no","code":"placement.undefined_code","request_id":"req-2"}]}`,
		"Content-Type", "application/json", "OpenStack-API-Version", "placement 1.39", "Vary", "openstack-api-version")
	ds := Compare("/resource_providers/x", ref, ours, nil)
	if got := strings.Join(classesOf(ds), ";"); got != "header vary" {
		t.Errorf("request ids must not count, Vary must: %q", got)
	}
	ref = answer(200, `{"inventories": {"VCPU": {"total": 4, "allocation_ratio": 16}}, "resource_provider_generation": 1}`)
	ours = answer(200, `{"inventories": {"VCPU": {"total": 4, "allocation_ratio": 16.0}}, "resource_provider_generation": 2}`)
	got := classesOf(Compare("/resource_providers/x/inventories", ref, ours, nil))
	want := "body $.inventories.{rc}.allocation_ratio number-format;body $.resource_provider_generation value"
	if strings.Join(got, ";") != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = classesOf(Compare("/", answer(404, "x"), answer(200, "x"), nil))
	if strings.Join(got, ";") != "status " {
		t.Errorf("status: %q", got)
	}
}

// TestRunnerMapsGeneratedUUIDs: a provider created without a uuid gets
// one of each server's choosing; later requests name the reference's,
// ours receives its own, and its answers are read with the reference's.
func TestRunnerMapsGeneratedUUIDs(t *testing.T) {
	rn := NewRunner("http://ref", "http://ours", 1)
	create := &Request{Method: "POST", Path: "/resource_providers", Body: `{"name": "x"}`, MV: 39}
	rn.learnGenerated(create, answer(201, "", "Location", "http://ref/resource_providers/"+rpA),
		answer(201, "", "Location", "http://ours/resource_providers/"+rpB))
	if got := rn.forOurs("/resource_providers/" + rpA + "/inventories"); got != "/resource_providers/"+rpB+"/inventories" {
		t.Errorf("ours is sent %s", got)
	}
	if got := rn.forOurs("/resource_providers/@gen1@"); got != "/resource_providers/"+rpB {
		t.Errorf("a trace placeholder for ours: %s", got)
	}
	if got := rn.forRef("/resource_providers/@gen1@"); got != "/resource_providers/"+rpA {
		t.Errorf("a trace placeholder for the reference: %s", got)
	}
	if got := rn.traced(`{"uuid": "` + rpA + `"}`); got != `{"uuid": "@gen1@"}` {
		t.Errorf("traced as %s", got)
	}
	ours := answer(200, `{"uuid": "`+rpB+`"}`, "Location", "/resource_providers/"+rpB)
	rn.toRef(ours)
	if ds := Compare("/", answer(200, `{"uuid": "`+rpA+`"}`, "Location", "/resource_providers/"+rpA), ours, nil); len(ds) != 0 {
		t.Errorf("mapped answer differs: %v", ds)
	}
	withUUID := &Request{Method: "POST", Path: "/resource_providers", Body: `{"name": "y", "uuid": "` + rpA + `"}`}
	rn.learnGenerated(withUUID, answer(201, "", "Location", "/resource_providers/"+rpA), answer(201, "", "Location", "/resource_providers/"+rpA))
	if len(rn.genRef) != 1 {
		t.Errorf("a client-chosen uuid was learnt as generated: %v", rn.genRef)
	}
}

func TestGroupMismatchesKeepsFirstOp(t *testing.T) {
	vary := []Diff{{Kind: "header", Where: "vary"}}
	ms := []Mismatch{
		{Op: 5, Method: "GET", Path: "/resource_providers/" + rpA, Diffs: vary},
		{Op: 9, Method: "GET", Path: "/traits", Diffs: vary},
		{Op: 12, Method: "GET", Path: "/resource_providers/" + rpB, Diffs: vary},
	}
	gs := GroupMismatches(ms)
	if len(gs) != 2 || gs[0].First.Op != 5 || len(gs[0].Ops) != 2 || gs[1].Key != "GET /traits | header vary" {
		t.Errorf("groups: %+v", gs)
	}
}

func TestCompareTraitsAsSets(t *testing.T) {
	ref := answer(200, `{"traits": ["HW_NIC_SRIOV", "COMPUTE_NODE"], "resource_provider_generation": 3}`)
	if ds := Compare("/traits", ref, answer(200, `{"traits":["COMPUTE_NODE","HW_NIC_SRIOV"],"resource_provider_generation":3}`), nil); len(ds) != 0 {
		t.Errorf("same traits in another order: %v", ds)
	}
	ds := Compare("/traits", ref, answer(200, `{"traits":["COMPUTE_NODE"],"resource_provider_generation":3}`), nil)
	if got := strings.Join(classesOf(ds), ";"); got != "body $.traits[*] missing-item" {
		t.Errorf("a trait less: %q", got)
	}
}

func TestCompareIgnoresTimestampsOnly(t *testing.T) {
	ref := answer(409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "conflict [parameters: ('2026-11-24 20:00:45.258031', 114)]"}]}`)
	ours := answer(409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "conflict [parameters: ('2026-11-24 20:00:46.001', 114)]"}]}`)
	if ds := Compare("/x", ref, ours, nil); len(ds) != 0 {
		t.Errorf("only the time differs: %v", ds)
	}
	ours = answer(409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "conflict [parameters: ('2026-11-24 20:00:46.001', 115)]"}]}`)
	if got := strings.Join(classesOf(Compare("/x", ref, ours, nil)), ";"); got != "body $.errors[*].detail value [conflict [parameters]" {
		t.Errorf("another id: %q", got)
	}
}

// Error details of one route group by the kind of error they report.
func TestDetailKindSeparatesErrors(t *testing.T) {
	for detail, want := range map[string]string{
		"The server could not comply.\n\n Malformed JSON: Expecting value: line 1":  "Malformed JSON",
		"Conflict.\n\n Unable to allocate inventory: Inventory for 'VCPU' invalid.": "Unable to allocate inventory",
		"no paragraph": "no paragraph",
	} {
		if got := detailKind(detail); got != want {
			t.Errorf("detailKind(%q) = %q, want %q", detail, got, want)
		}
	}
}

// TestCompareSetListsAsSets: aggregates and a mapping's providers follow
// the reference's per-process set order, so only their members count.
func TestCompareSetListsAsSets(t *testing.T) {
	const a, b = "3f64b20e-40b6-4a84-a6f2-da9ae05c11f3", "d6ad0991-f206-4642-a462-17268295f4ae"
	ref := answer(200, `{"aggregates": ["`+b+`", "`+a+`"], "resource_provider_generation": 5}`)
	if ds := Compare("/resource_providers/x/aggregates", ref, answer(200, `{"aggregates":["`+a+`","`+b+`"],"resource_provider_generation":5}`), nil); len(ds) != 0 {
		t.Errorf("same aggregates in another order: %v", ds)
	}
	if ds := Compare("/resource_providers/x/aggregates", ref, answer(200, `{"aggregates":["`+a+`"],"resource_provider_generation":5}`), nil); len(ds) == 0 {
		t.Error("an aggregate less is not reported")
	}
	ac := func(first, second string) string {
		return `{"allocation_requests": [{"allocations": {}, "mappings": {"": ["` + first + `", "` + second + `"]}}], "provider_summaries": {}}`
	}
	if ds := Compare("/allocation_candidates?resources=VCPU:1", answer(200, ac(b, a)), answer(200, ac(a, b)), nil); len(ds) != 0 {
		t.Errorf("same mapping in another order: %v", ds)
	}
	if ds := Compare("/allocation_candidates?resources=VCPU:1", answer(200, ac(b, a)), answer(200, ac(a, a)), nil); len(ds) == 0 {
		t.Error("a different mapping is not reported")
	}
}
