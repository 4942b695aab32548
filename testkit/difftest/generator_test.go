package difftest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// answerPlainly answers a request the way a permissive server would, with
// statuses and bodies in the real wire format, so that the generator's
// model grows without a server: created providers exist, writes succeed.
func answerPlainly(r *Request, n int) *Answer {
	a := &Answer{Status: 200, Header: http.Header{}, Body: []byte("{}")}
	switch {
	case r.Method == "POST" && RouteTemplate(r.Path) == "/resource_providers":
		u := uuidOf(r)
		if u == "" {
			u = fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		}
		a.Status = 201
		a.Header.Set("Location", "/resource_providers/"+u)
		a.Body = nil
	case r.Method == "DELETE":
		a.Status, a.Body = 204, nil
	case r.Method == "PUT" && RouteTemplate(r.Path) == "/resource_providers/{uuid}/inventories":
		a.Body = []byte(`{"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 8, "reserved": 0,
			"min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 1.0}}}`)
	}
	return a
}

// generate runs a generator for n requests against answerPlainly.
func generate(seed uint64, n int) []*Request {
	g := NewGenerator(seed)
	var out []*Request
	for i := range n {
		r, _ := g.Next()
		out = append(out, r)
		g.Observe(r, answerPlainly(r, i))
	}
	return out
}

func requestLine(r *Request) string {
	h := ""
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		v := "<none>"
		if r.Headers[k] != nil {
			v = *r.Headers[k]
		}
		h += k + ": " + v + "; "
	}
	return fmt.Sprintf("%s %s mv=%d h=%s body=%s", r.Method, r.Path, r.MV, h, r.Body)
}

func TestGeneratorIsDeterministicPerSeed(t *testing.T) {
	a, b, c := generate(7, 600), generate(7, 600), generate(8, 600)
	for i := range a {
		if requestLine(a[i]) != requestLine(b[i]) {
			t.Fatalf("seed 7, request %d differs between two runs:\n%s\n%s", i+1, requestLine(a[i]), requestLine(b[i]))
		}
	}
	same := 0
	for i := range a {
		if requestLine(a[i]) == requestLine(c[i]) {
			same++
		}
	}
	if same > len(a)/2 {
		t.Errorf("seeds 7 and 8 share %d of %d requests", same, len(a))
	}
}

// TestGeneratorCoversEveryRouteAndMicroversion checks that a run of the
// CI's length reaches every route and method of the API, every
// microversion from 1.0 to 1.39, and every kind of request.
func TestGeneratorCoversEveryRouteAndMicroversion(t *testing.T) {
	s := Stats{Routes: map[string]int{}, Minors: map[int]int{}}
	gens := map[string]bool{}
	bad := 0
	for _, r := range generate(1, 3000) {
		s.Routes[r.Method+" "+RouteTemplate(r.Path)]++
		if r.MV >= 0 {
			s.Minors[r.MV]++
		}
		gens[r.Gen] = true
		if r.Bad {
			bad++
		}
	}
	if missing := Uncovered(s); len(missing) > 0 {
		t.Errorf("routes never generated: %v", missing)
	}
	if missing := MissingMinors(s); len(missing) > 0 {
		t.Errorf("microversions never sent: %v", missing)
	}
	for _, g := range []string{"scenario", "sync-rp", "sync-consumer", "ac", "ac-unlimited", "reshaper", "bad_json",
		"schema", "wrong_gen", "weird_ids", "bad_mvhdr", "wrong_method", "bad_accept", "bad_ctype", "unknown_route",
		"no_auth", "non_admin", "huge"} {
		if !gens[g] {
			t.Errorf("no %s request in 3000", g)
		}
	}
	if bad < 300 {
		t.Errorf("only %d of 3000 requests are deliberately wrong", bad)
	}
}

// TestGeneratorBuildsNestedSharedTrees checks that the model learns trees
// with children and sharing providers in aggregates from the answers.
func TestGeneratorBuildsNestedSharedTrees(t *testing.T) {
	g := NewGenerator(3)
	for i := range 800 {
		r, _ := g.Next()
		g.Observe(r, answerPlainly(r, i))
	}
	nested, sharing := 0, 0
	for _, p := range g.m.providers() {
		if p.Parent != "" && p.Root != p.UUID {
			nested++
		}
	}
	granular, sameSubtree := 0, 0
	for _, r := range generate(3, 2000) {
		if r.Gen == "ac" && containsAll(r.Path, "resources_", "group_policy") {
			granular++
		}
		if containsAll(r.Path, "same_subtree") {
			sameSubtree++
		}
		if r.Gen == "scenario" && containsAll(r.Body, sharesTrait) {
			sharing++
		}
	}
	if nested == 0 || sharing == 0 || granular == 0 || sameSubtree == 0 {
		t.Errorf("nested providers %d, sharing trait writes %d, granular queries %d, same_subtree %d: want all > 0",
			nested, sharing, granular, sameSubtree)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// uuidOf reads the uuid a create request carries.
func uuidOf(r *Request) string {
	var b struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal([]byte(r.Body), &b)
	return b.UUID
}
