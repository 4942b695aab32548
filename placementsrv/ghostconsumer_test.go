package placementsrv_test

import (
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// Upstream commits a new consumer before it looks up the providers an
// allocation write names; a write naming an unknown provider fails with
// 400 and leaves the consumer at generation 0 without allocations. Other
// failures (a later consumer's generation, an unknown class, capacity)
// remove it again. Same on 8.0.0 and 15.0.0.

const (
	gcRP  = "66666666-0000-0000-0000-000000000001"
	gcBad = "11111111-2222-3333-4444-555555555555"
	gcG   = "77777777-0000-0000-0000-000000000001"
	gcH1  = "77777777-0000-0000-0000-000000000002"
	gcH2  = "77777777-0000-0000-0000-000000000003"
	gcH3  = "77777777-0000-0000-0000-000000000004"
	gcH4  = "77777777-0000-0000-0000-000000000005"
	gcE   = "77777777-0000-0000-0000-000000000006"
)

// gcBody is one consumer's allocations of class on rp, at generation gen
// ("null" or a number).
func gcBody(rp, class, amount, gen string) string {
	return `{"allocations":{"` + rp + `":{"resources":{"` + class + `":` + amount + `}}},"consumer_generation":` + gen + `,` + ocPU + `}`
}

type gcStep struct {
	name         string
	method, path string
	body         string
	status       int
	contains     string // in the body without its spaces, whatever the status
}

func gcSteps() []gcStep {
	ok := gcBody(gcRP, "VCPU", "1", "null")
	unknown := `"Allocation for resource provider '` + gcBad + `' that does not exist."`
	return []gcStep{
		{"provider", "POST", "/resource_providers", `{"uuid":"` + gcRP + `","name":"ghosts"}`, 200, ""},
		{"inventory", "PUT", "/resource_providers/" + gcRP + "/inventories", `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":4}}}`, 200, ""},
		{"put on an unknown provider", "PUT", "/allocations/" + gcG, gcBody(gcBad, "VCPU", "1", "null"), 400, unknown[1 : len(unknown)-1]},
		{"the ghost has no allocations", "GET", "/allocations/" + gcG, "", 200, `{"allocations":{}}`},
		{"delete finds none", "DELETE", "/allocations/" + gcG, "", 404, "No allocations for consumer"},
		{"null is refused", "PUT", "/allocations/" + gcG, ok, 409, "expected 0 but got None"},
		{"1 is refused", "POST", "/allocations", `{"` + gcG + `":` + gcBody(gcRP, "VCPU", "1", "1") + `}`, 409, "expected 0 but got 1"},
		{"emptied at 0 stays", "PUT", "/allocations/" + gcG, `{"allocations":{},"consumer_generation":0,` + ocPU + `}`, 204, ""},
		{"still at 0", "PUT", "/allocations/" + gcG, ok, 409, "expected 0 but got None"},
		{"post, second consumer on an unknown provider", "POST", "/allocations",
			`{"` + gcH1 + `":` + ok + `,"` + gcH2 + `":` + gcBody(gcBad, "VCPU", "1", "null") + `}`, 400, "does not exist"},
		{"the first is a ghost too", "PUT", "/allocations/" + gcH1, ok, 409, "expected 0 but got None"},
		{"and the second", "PUT", "/allocations/" + gcH2, ok, 409, "expected 0 but got None"},
		{"post, second consumer's generation refused", "POST", "/allocations",
			`{"` + gcH3 + `":` + ok + `,"` + gcE + `":` + gcBody(gcRP, "VCPU", "1", "5") + `}`, 409, "expected null but got 5"},
		{"no ghost left by a generation conflict", "PUT", "/allocations/" + gcH3, ok, 204, ""},
		{"unknown class", "PUT", "/allocations/" + gcH4, gcBody(gcRP, "CUSTOM_NOPE", "1", "null"), 400, "CUSTOM_NOPE"},
		{"over capacity", "PUT", "/allocations/" + gcH4, gcBody(gcRP, "VCPU", "9", "null"), 409, "capacity"},
		{"no ghost left by a class or capacity failure", "PUT", "/allocations/" + gcH4, ok, 204, ""},
		{"the ghost written at 0", "PUT", "/allocations/" + gcG, gcBody(gcRP, "VCPU", "1", "0"), 204, ""},
		{"now at 1", "GET", "/allocations/" + gcG, "", 200, `"consumer_generation":1`},
		{"usages count the written consumers only", "GET", "/usages?project_id=" + oc1, "", 200, `{"usages":{"VCPU":3}}`},
		{"emptying removes it", "PUT", "/allocations/" + gcG, `{"allocations":{},"consumer_generation":1,` + ocPU + `}`, 204, ""},
		{"gone", "PUT", "/allocations/" + gcG, ok, 204, ""},
	}
}

func TestGhostConsumer(t *testing.T) {
	forReleases(t, func(t *testing.T, s *placementtest.Server) {
		for _, st := range gcSteps() {
			status, _, b := call(t, s, st.method, st.path, "1.37", "admin", st.body)
			if status != st.status {
				t.Errorf("%s: %s %s: status %d, want %d under %s: %s", st.name, st.method, st.path, status, st.status, s.Release, b)
				continue
			}
			if st.contains != "" && !strings.Contains(compact(b), st.contains) {
				t.Errorf("%s: body lacks %q: %s", st.name, st.contains, b)
			}
		}
	})
}

// compact is b without the spaces the reference puts after JSON's colons
// and commas, so that one expected text fits both servers.
func compact(b []byte) string {
	return strings.NewReplacer(`": `, `":`, `, "`, `,"`).Replace(string(b))
}

const (
	gfRP = "66666666-0000-0000-0000-000000000002"
	gfA  = "88888888-0000-0000-0000-000000000001"
	gfB  = "88888888-0000-0000-0000-000000000002"
	gfC  = "88888888-0000-0000-0000-000000000003"
	gfD  = "88888888-0000-0000-0000-000000000004"
	gfX  = "88888888-0000-0000-0000-000000000005"
	gfY  = "88888888-0000-0000-0000-000000000006"
	gfE  = "88888888-0000-0000-0000-000000000007"
	gfF  = "88888888-0000-0000-0000-000000000008"
	gfG  = "88888888-0000-0000-0000-000000000009"
)

// gfSteps are the other forms of the same behaviour, each at its
// microversion: a write that leaves a new consumer without allocations
// keeps it at generation 0 (PUT and POST); an unknown provider leaves new
// consumers in every form (the list form before 1.12, without a
// generation check before 1.28, POST, the reshaper) but never changes an
// existing one (its project stays); a failure after the providers are
// found removes the new consumers again, even an empty one.
func gfSteps() []gcStep {
	ok := func(gen string) string { return gcBody(gfRP, "VCPU", "1", gen) }
	unknown := gcBody(gcBad, "VCPU", "1", "null")
	moved := `{"allocations":{"` + gcBad + `":{"resources":{"VCPU":1}}},"consumer_generation":1,"project_id":"p2","user_id":"u2"}`
	inv := `"` + gfRP + `":{"resource_provider_generation":5,"inventories":{"VCPU":{"total":4}}}`
	return []gcStep{
		{"provider", "POST", "/resource_providers@1.20", `{"uuid":"` + gfRP + `","name":"ghost forms"}`, 200, ""},
		{"inventory", "PUT", "/resource_providers/" + gfRP + "/inventories@1.20", `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":4}}}`, 200, ""},
		{"put empty for a new consumer", "PUT", "/allocations/" + gfA + "@1.28", `{"allocations":{},"consumer_generation":null,` + ocPU + `}`, 204, ""},
		{"kept without allocations", "GET", "/allocations/" + gfA + "@1.28", "", 200, `{"allocations":{}}`},
		{"kept at 0", "PUT", "/allocations/" + gfA + "@1.28", ok("null"), 409, "expected 0 but got None"},
		{"post empty for a new consumer", "POST", "/allocations@1.13", `{"` + gfB + `":{"allocations":{},` + ocPU + `}}`, 204, ""},
		{"kept at 0 too", "PUT", "/allocations/" + gfB + "@1.28", ok("null"), 409, "expected 0 but got None"},
		{"list form on an unknown provider", "PUT", "/allocations/" + gfC + "@1.0",
			`{"allocations":[{"resource_provider":{"uuid":"` + gcBad + `"},"resources":{"VCPU":1}}]}`, 400, "does not exist"},
		{"left at 0", "PUT", "/allocations/" + gfC + "@1.28", ok("null"), 409, "expected 0 but got None"},
		{"written at 0", "PUT", "/allocations/" + gfC + "@1.28", ok("0"), 204, ""},
		{"1.12 on an unknown provider", "PUT", "/allocations/" + gfD + "@1.12", `{"allocations":{"` + gcBad + `":{"resources":{"VCPU":1}}},` + ocPU + `}`, 400, "does not exist"},
		{"written without a generation", "PUT", "/allocations/" + gfD + "@1.12", `{"allocations":{"` + gfRP + `":{"resources":{"VCPU":1}}},` + ocPU + `}`, 204, ""},
		{"then at 1", "GET", "/allocations/" + gfD + "@1.28", "", 200, `"consumer_generation":1`},
		{"an existing consumer", "PUT", "/allocations/" + gfX + "@1.28", ok("null"), 204, ""},
		{"moved to an unknown provider by another project", "PUT", "/allocations/" + gfX + "@1.28", moved, 400, "does not exist"},
		{"post: a new consumer and the existing one moved", "POST", "/allocations@1.28", `{"` + gfY + `":` + ok("null") + `,"` + gfX + `":` + moved + `}`, 400, "does not exist"},
		{"the existing one's project unchanged", "GET", "/allocations/" + gfX + "@1.28", "", 200, ocPU},
		{"nor its generation", "GET", "/allocations/" + gfX + "@1.28", "", 200, `"consumer_generation":1`},
		{"the new one left", "PUT", "/allocations/" + gfY + "@1.28", ok("null"), 409, "expected 0 but got None"},
		{"post: an empty new consumer and one over capacity", "POST", "/allocations@1.28",
			`{"` + gfE + `":{"allocations":{},"consumer_generation":null,` + ocPU + `},"` + gfF + `":` + gcBody(gfRP, "VCPU", "9", "null") + `}`, 409, "capacity"},
		{"neither left", "PUT", "/allocations/" + gfE + "@1.28", ok("null"), 204, ""},
		{"reshaper on an unknown provider", "POST", "/reshaper@1.30", `{"inventories":{` + inv + `},"allocations":{"` + gfG + `":` + unknown + `}}`, 400, "does not exist"},
		{"left by the reshaper", "PUT", "/allocations/" + gfG + "@1.28", ok("null"), 409, "expected 0 but got None"},
		{"usages count consumers with allocations only", "GET", "/usages?project_id=" + oc1 + "@1.38", "", 200, `{"usages":{"unknown":{"VCPU":4,"consumer_count":4}}}`},
	}
}

func TestGhostConsumerForms(t *testing.T) {
	forReleases(t, func(t *testing.T, s *placementtest.Server) {
		for _, st := range gfSteps() {
			path, version, _ := strings.Cut(st.path, "@")
			status, _, b := call(t, s, st.method, path, version, "admin", st.body)
			if status != st.status {
				t.Errorf("%s: %s %s: status %d, want %d under %s: %s", st.name, st.method, st.path, status, st.status, s.Release, b)
				continue
			}
			if st.contains != "" && !strings.Contains(compact(b), st.contains) {
				t.Errorf("%s: body lacks %q: %s", st.name, st.contains, b)
			}
		}
	})
}
