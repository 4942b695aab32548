package placementsrv_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// These tests pin where Placement 15.0.0 answers differently from 8.0.0
// (found by the differential tester against both). Each runs the same
// table against both references and against ours under both releases;
// a row gives each release's expected status.

// forReleases runs f against the reference and ours for each release.
func forReleases(t *testing.T, f func(t *testing.T, s *placementtest.Server)) {
	for _, r := range []release.Release{release.V8, release.V15} {
		t.Run("reference-"+r.String(), func(t *testing.T) {
			f(t, placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: r}))
		})
		t.Run("ours-"+r.String(), func(t *testing.T) {
			f(t, placementtest.StartOurs(t, placementtest.Options{Release: r}))
		})
	}
}

// byRelease is an expected status per release.
type byRelease struct{ v8, v15 int }

func (b byRelease) of(r release.Release) int {
	if r == release.V8 {
		return b.v8
	}
	return b.v15
}

// step is one request of a sequence and its expected answer: the status
// per release and, when set, a text an error's body must contain.
type step struct {
	name         string
	method, path string
	body         string
	want         byRelease
	contains     string
}

func runSteps(t *testing.T, s *placementtest.Server, version string, steps []step) {
	t.Helper()
	for _, st := range steps {
		status, _, b := call(t, s, st.method, st.path, version, "admin", st.body)
		if want := st.want.of(s.Release); status != want {
			t.Errorf("%s: %s %s: status %d, want %d under %s: %s", st.name, st.method, st.path, status, want, s.Release, b)
			continue
		}
		if st.contains != "" && status >= 400 && !strings.Contains(string(b), st.contains) {
			t.Errorf("%s: body lacks %q: %s", st.name, st.contains, b)
		}
	}
}

const (
	oc1   = "33333333-0000-0000-0000-000000000001"
	oc2   = "33333333-0000-0000-0000-000000000002"
	ocRP  = "44444444-0000-0000-0000-000000000001"
	ocRP2 = "44444444-0000-0000-0000-000000000002"
	ocC1  = "55555555-0000-0000-0000-000000000001"
	ocC2  = "55555555-0000-0000-0000-000000000002"
	ocC3  = "55555555-0000-0000-0000-000000000003"
	ocPU  = `"project_id":"` + oc1 + `","user_id":"` + oc2 + `"`
)

// alloc is one consumer's allocations body entry on ocRP (and ocRP2 when
// vcpu2 > 0); a zero vcpu makes it empty (POST /allocations removes it).
// Without a consumer generation: the writes go at 1.27, so that a refused
// write under one release does not shift the generations the next expects.
func alloc(vcpu, vcpu2 int) string {
	var parts []string
	if vcpu > 0 {
		parts = append(parts, `"`+ocRP+`":{"resources":{"VCPU":`+strconv.Itoa(vcpu)+`}}`)
	}
	if vcpu2 > 0 {
		parts = append(parts, `"`+ocRP2+`":{"resources":{"VCPU":`+strconv.Itoa(vcpu2)+`}}`)
	}
	return `{"allocations":{` + strings.Join(parts, ",") + `},` + ocPU + `}`
}

// overCapacitySteps is upstream's functional scenario for bug 2104040
// (two consumers at 7 of a 10 VCPU provider with ratio 2, then the
// inventory changed so that capacity is 10), driven through the API,
// with a second provider in some writes. 8.0.0 refuses every write that
// leaves the provider over capacity; 15.0.0 allows those that do not make
// it worse.
func overCapacitySteps(pre, post string) []step {
	inv := func(gen, fields string) string {
		return `{"resource_provider_generation":` + gen + `,"inventories":{"VCPU":{"total":10,"max_unit":10,` + fields + `}}}`
	}
	exceeded := "The requested amount would exceed the capacity."
	return []step{
		{"provider", "POST", "/resource_providers", `{"uuid":"` + ocRP + `","name":"overcap"}`, byRelease{200, 200}, ""},
		{"other provider", "POST", "/resource_providers", `{"uuid":"` + ocRP2 + `","name":"roomy"}`, byRelease{200, 200}, ""},
		{"inventory", "PUT", "/resource_providers/" + ocRP + "/inventories", inv("0", pre), byRelease{200, 200}, ""},
		{"other inventory", "PUT", "/resource_providers/" + ocRP2 + "/inventories", inv("0", `"reserved":5,"allocation_ratio":1.0`), byRelease{200, 200}, ""},
		{"two consumers at 7", "POST", "/allocations", `{"` + ocC1 + `":` + alloc(7, 0) + `,"` + ocC2 + `":` + alloc(7, 0) + `}`, byRelease{204, 204}, ""},
		{"over capacity", "PUT", "/resource_providers/" + ocRP + "/inventories", inv("2", post), byRelease{200, 200}, ""},
		{"growing is refused", "PUT", "/allocations/" + ocC1, alloc(8, 0), byRelease{409, 409}, exceeded},
		{"one shrinks 7 to 6", "PUT", "/allocations/" + ocC1, alloc(6, 0), byRelease{409, 204}, exceeded},
		{"both at 6, the first write dropping the count", "POST", "/allocations", `{"` + ocC1 + `":` + alloc(6, 0) + `,"` + ocC2 + `":` + alloc(6, 0) + `}`, byRelease{409, 204}, exceeded},
		{"a third consumer takes a bit more than the one that leaves", "POST", "/allocations",
			`{"` + ocC1 + `":` + alloc(0, 0) + `,"` + ocC2 + `":` + alloc(6, 0) + `,"` + ocC3 + `":` + alloc(7, 0) + `}`, byRelease{409, 409}, exceeded},
		{"a third consumer takes over the first one's 6", "POST", "/allocations",
			`{"` + ocC1 + `":` + alloc(0, 0) + `,"` + ocC2 + `":` + alloc(6, 0) + `,"` + ocC3 + `":` + alloc(6, 0) + `}`, byRelease{409, 204}, exceeded},
		{"growing on the other provider's fresh class is checked strictly", "PUT", "/allocations/" + ocC2, alloc(6, 6), byRelease{409, 409}, exceeded},
		{"two providers in one write, the over-capacity one shrinking", "POST", "/allocations",
			`{"` + ocC2 + `":` + alloc(5, 3) + `,"` + ocC3 + `":` + alloc(6, 0) + `}`, byRelease{409, 204}, exceeded},
		{"both at 5: within capacity again", "POST", "/allocations",
			`{"` + ocC2 + `":` + alloc(5, 0) + `,"` + ocC3 + `":` + alloc(5, 0) + `}`, byRelease{409, 204}, exceeded},
		{"usage", "GET", "/resource_providers/" + ocRP + "/usages", "", byRelease{200, 200}, ""},
	}
}

func TestOverCapacityAllocationRule(t *testing.T) {
	for _, tc := range []struct{ name, pre, post string }{
		{"ratio", `"allocation_ratio":2.0`, `"allocation_ratio":1.0`},
		{"reserved", `"reserved":0,"allocation_ratio":2.0`, `"reserved":5,"allocation_ratio":2.0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forReleases(t, func(t *testing.T, s *placementtest.Server) {
				runSteps(t, s, "1.27", overCapacitySteps(tc.pre, tc.post))
				var u struct {
					Usages map[string]int `json:"usages"`
				}
				if err := json.Unmarshal(must(t, s, 200, "GET", "/resource_providers/"+ocRP+"/usages", ""), &u); err != nil {
					t.Fatal(err)
				}
				if want := (byRelease{14, 10}).of(s.Release); u.Usages["VCPU"] != want {
					t.Errorf("VCPU used after the scenario: %d, want %d", u.Usages["VCPU"], want)
				}
			})
		})
	}
}

// TestOverCapacityReshape: the reshaper replaces allocations with the
// same rule.
func TestOverCapacityReshape(t *testing.T) {
	forReleases(t, func(t *testing.T, s *placementtest.Server) {
		runSteps(t, s, "1.27", overCapacitySteps(`"allocation_ratio":2.0`, `"allocation_ratio":1.0`)[:6])
		inv := `{"` + ocRP + `":{"resource_provider_generation":3,"inventories":{"VCPU":{"total":10,"max_unit":10,"allocation_ratio":1.0}}}}`
		entry := func(n int) string { return strings.TrimSuffix(alloc(n, 0), "}") + `,"consumer_generation":1}` }
		body := func(a, b int) string {
			return `{"inventories":` + inv + `,"allocations":{"` + ocC1 + `":` + entry(a) + `,"` + ocC2 + `":` + entry(b) + `}}`
		}
		runSteps(t, s, "1.30", []step{
			{"reshape that grows", "POST", "/reshaper", body(8, 7), byRelease{409, 409}, "exceed the capacity"},
			{"reshape that shrinks", "POST", "/reshaper", body(6, 7), byRelease{409, 204}, "exceed the capacity"},
		})
	})
}

// TestUUIDFormats: 15.0.0 validates GET /resource_providers' uuid and
// in_tree with jsonschema's own uuid format (dashes where RFC 4122 has
// them), 8.0.0 with oslo's is_uuid_like (any 32 hex digits); bodies and
// the parameters other handlers check themselves accept both in both.
func TestUUIDFormats(t *testing.T) {
	const (
		dashed   = "66666666-0000-4000-8000-000000000001"
		dashless = "66666666000040008000000000000001"
		upper    = "ABCDEF66-0000-4000-8000-000000000001"
		braced   = "{" + dashed + "}"
	)
	notUUID := "is not a 'uuid'"
	forReleases(t, func(t *testing.T, s *placementtest.Server) {
		runSteps(t, s, "1.39", []step{
			{"provider", "POST", "/resource_providers", `{"uuid":"` + dashed + `","name":"uuids"}`, byRelease{200, 200}, ""},
			{"in_tree dashed", "GET", "/resource_providers?in_tree=" + dashed, "", byRelease{200, 200}, ""},
			{"in_tree dashless", "GET", "/resource_providers?in_tree=" + dashless, "", byRelease{200, 400}, notUUID},
			{"in_tree braced", "GET", "/resource_providers?in_tree=" + braced, "", byRelease{200, 400}, notUUID},
			{"in_tree upper case", "GET", "/resource_providers?in_tree=" + upper, "", byRelease{200, 200}, ""},
			{"in_tree not a uuid", "GET", "/resource_providers?in_tree=abc", "", byRelease{400, 400}, notUUID},
			{"uuid dashless", "GET", "/resource_providers?uuid=" + dashless, "", byRelease{200, 400}, notUUID},
			{"uuid urn", "GET", "/resource_providers?uuid=urn:uuid:" + dashed, "", byRelease{200, 400}, notUUID},
			{"member_of dashless", "GET", "/resource_providers?member_of=" + dashless, "", byRelease{200, 200}, ""},
			{"allocation candidates in_tree dashless", "GET", "/allocation_candidates?resources=VCPU:1&in_tree=" + dashless, "", byRelease{200, 200}, ""},
			{"body uuid dashless", "POST", "/resource_providers", `{"uuid":"` + strings.Replace(dashless, "1", "2", 1) + `","name":"dashless"}`, byRelease{200, 200}, ""},
			{"body parent dashless, unknown", "PUT", "/resource_providers/" + dashed, `{"name":"uuids","parent_provider_uuid":"` + strings.Repeat("7", 32) + `"}`, byRelease{400, 400}, ""},
			{"aggregate dashless", "PUT", "/resource_providers/" + dashed + "/aggregates", `{"resource_provider_generation":0,"aggregates":["` + dashless + `"]}`, byRelease{200, 200}, ""},
		})
		runSteps(t, s, "", []step{
			{"uuid dashless at 1.0", "GET", "/resource_providers?uuid=" + dashless, "", byRelease{200, 400}, notUUID},
		})
	})
}
