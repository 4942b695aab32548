package placementsrv_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// These tests pin behaviours of Placement 8.0.0 that its own gabbi suite
// does not cover and that differential runs against it found (the repro
// traces of issue 13). Each runs against our server and the reference with
// the same expectations.

// call sends one request and returns status, headers and body.
func call(t *testing.T, s *placementtest.Server, method, path, version, token, body string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+version)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Close = true // uWSGI answers one request per connection
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// must is call as admin at 1.39, failing unless the status is want.
func must(t *testing.T, s *placementtest.Server, want int, method, path, body string) []byte {
	t.Helper()
	status, _, b := call(t, s, method, path, "1.39", "admin", body)
	if status != want {
		t.Fatalf("%s: %s %s: status %d, want %d: %s", s.Kind, method, path, status, want, b)
	}
	return b
}

func forKinds(t *testing.T, f func(t *testing.T, s *placementtest.Server)) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) { f(t, placementtest.Start(t, kind)) })
	}
}

const (
	uR1 = "11111111-0000-0000-0000-000000000001"
	uR2 = "11111111-0000-0000-0000-000000000002"
	uC2 = "11111111-0000-0000-0000-000000000003"
	uSS = "11111111-0000-0000-0000-000000000004"
	uR3 = "11111111-0000-0000-0000-000000000005"
	agg = "22222222-0000-0000-0000-000000000001"
)

// provider creates a provider with inventories, traits and aggregates.
func provider(t *testing.T, s *placementtest.Server, uuid, name, parent, invs string, traits []string, aggs bool) {
	t.Helper()
	body := `{"uuid":"` + uuid + `","name":"` + name + `"`
	if parent != "" {
		body += `,"parent_provider_uuid":"` + parent + `"`
	}
	must(t, s, 200, "POST", "/resource_providers", body+"}")
	gen := 0
	if invs != "" {
		must(t, s, 200, "PUT", "/resource_providers/"+uuid+"/inventories",
			`{"resource_provider_generation":0,"inventories":{`+invs+`}}`)
		gen++
	}
	if len(traits) > 0 {
		tr, _ := json.Marshal(traits)
		must(t, s, 200, "PUT", "/resource_providers/"+uuid+"/traits",
			`{"resource_provider_generation":`+string(rune('0'+gen))+`,"traits":`+string(tr)+`}`)
		gen++
	}
	if aggs {
		must(t, s, 200, "PUT", "/resource_providers/"+uuid+"/aggregates",
			`{"resource_provider_generation":`+string(rune('0'+gen))+`,"aggregates":["`+agg+`"]}`)
	}
}

// candidateSet returns an answer's allocation requests as canonical JSON.
func candidateSet(t *testing.T, b []byte) []string {
	t.Helper()
	var ans struct {
		AllocationRequests []json.RawMessage `json:"allocation_requests"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var out []string
	for _, raw := range ans.AllocationRequests {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		c, _ := json.Marshal(v) // maps marshal with sorted keys
		out = append(out, string(c))
	}
	slices.Sort(out)
	return out
}

// TestSharingOnlyRequestKeepsOneAnchor: a DISK_GB request served only by
// a sharing provider survives, in Placement 8.0.0, at the first root of
// its Python set of (provider, root, class) tuples only, whether or not
// the other groups fit there. Here that root is R1, which has no VCPU, so the
// granular VCPU group finds nothing, although R2's child could serve it.
// A limit never brings in a candidate the unlimited answer lacks.
// (Ids: R1 1, R2 2, the sharing provider 5; its tuples (5, root, DISK_GB)
// iterate roots 1, 2, 5.)
func TestSharingOnlyRequestKeepsOneAnchor(t *testing.T) {
	forKinds(t, func(t *testing.T, s *placementtest.Server) {
		disk := `"DISK_GB":{"total":100}`
		provider(t, s, uR1, "r1", "", `"MEMORY_MB":{"total":64}`, nil, true)
		provider(t, s, uR2, "r2", "", "", nil, true)
		provider(t, s, uC2, "c2", uR2, `"VCPU":{"total":4}`, nil, false)
		provider(t, s, uR3, "r3", "", `"VCPU":{"total":4}`, nil, false)
		provider(t, s, uSS, "ss", "", disk, []string{"MISC_SHARES_VIA_AGGREGATE"}, true)

		got := candidateSet(t, must(t, s, 200, "GET", "/allocation_candidates?resources=DISK_GB:1&resources1=VCPU:1", ""))
		if len(got) != 0 {
			t.Errorf("%s: VCPU with shared disk: %d candidates, want 0: %v", s.Kind, len(got), got)
		}
		// Without the granular group the request is there, once.
		got = candidateSet(t, must(t, s, 200, "GET", "/allocation_candidates?resources=DISK_GB:1", ""))
		want := []string{`{"allocations":{"` + uSS + `":{"resources":{"DISK_GB":1}}},"mappings":{"":["` + uSS + `"]}}`}
		if !slices.Equal(got, want) {
			t.Errorf("%s: shared disk alone: got %v, want %v", s.Kind, got, want)
		}
		// Memory from R1 joins the request at R1, its anchor.
		q := "/allocation_candidates?resources=DISK_GB:1&resources1=MEMORY_MB:1"
		full := candidateSet(t, must(t, s, 200, "GET", q, ""))
		if len(full) != 1 || !strings.Contains(full[0], uR1) {
			t.Errorf("%s: memory with shared disk: got %v, want R1's one", s.Kind, full)
		}
		for _, limit := range []string{"1", "2"} {
			for _, c := range candidateSet(t, must(t, s, 200, "GET", q+"&limit="+limit, "")) {
				if !slices.Contains(full, c) {
					t.Errorf("%s: limit=%s returned %s, not in the unlimited answer %v", s.Kind, limit, c, full)
				}
			}
		}
	})
}

// TestVaryOnlyOnHandlerResponses: Placement's microversion middleware
// adds "Vary: openstack-api-version" to what a handler returned, errors
// included, but not to the 404 of an object's NotFound or to a policy
// 403, which escape the handler.
func TestVaryOnlyOnHandlerResponses(t *testing.T) {
	forKinds(t, func(t *testing.T, s *placementtest.Server) {
		provider(t, s, uR1, "r1", "", `"VCPU":{"total":4}`, nil, false)
		cases := []struct {
			method, path, token string
			status              int
			vary                bool
		}{
			{"GET", "/resource_providers", "admin", 200, true},
			{"GET", "/resource_providers/" + uR1 + "/inventories/VCPU", "admin", 200, true},
			{"DELETE", "/traits", "admin", 405, true},
			{"GET", "/resource_providers/" + uR1 + "/inventories/DISK_GB", "admin", 404, true},
			{"GET", "/resource_providers/" + uR2, "admin", 404, false},
			{"GET", "/resource_providers/" + uR2 + "/inventories/VCPU", "admin", 404, true},
			{"DELETE", "/resource_providers/" + uR2 + "/traits", "admin", 404, false},
			{"GET", "/resource_classes/CUSTOM_NONE", "admin", 404, false},
			{"GET", "/traits/CUSTOM_NONE", "admin", 404, true},
			{"DELETE", "/traits/CUSTOM_NONE", "admin", 404, true},
			{"GET", "/resource_providers", "someone", 403, false},
		}
		for _, c := range cases {
			status, h, b := call(t, s, c.method, c.path, "1.39", c.token, "")
			if status != c.status {
				t.Errorf("%s: %s %s: status %d, want %d: %s", s.Kind, c.method, c.path, status, c.status, b)
			}
			if got := h.Get("Vary") == "openstack-api-version"; got != c.vary {
				t.Errorf("%s: %s %s (%d): Vary %q, want it: %v", s.Kind, c.method, c.path, status, h.Get("Vary"), c.vary)
			}
		}
		// An unknown class in PUT of one inventory is the resource class
		// object's NotFound, escaping the handler: no Vary.
		_, _, b := call(t, s, "GET", "/resource_providers/"+uR1, "1.39", "admin", "")
		var rp struct{ Generation int }
		if err := json.Unmarshal(b, &rp); err != nil {
			t.Fatalf("%s: provider: %v: %s", s.Kind, err, b)
		}
		body := fmt.Sprintf(`{"resource_provider_generation": %d, "total": 2}`, rp.Generation)
		status, h, b := call(t, s, "PUT", "/resource_providers/"+uR1+"/inventories/CUSTOM_NONE", "1.6", "admin", body)
		if status != 404 || h.Get("Vary") != "" {
			t.Errorf("%s: PUT an inventory of an unknown class: status %d, Vary %q, want 404 without Vary: %s", s.Kind, status, h.Get("Vary"), b)
		}
	})
}

// ratios returns the allocation_ratio literals of an inventory answer,
// by class ("" for a single inventory's).
func ratios(t *testing.T, b []byte) map[string]string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber() // keeps each number's text: 16 and 16.0 differ
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := map[string]string{}
	if r, ok := doc["allocation_ratio"].(json.Number); ok {
		out[""] = string(r)
	}
	invs, _ := doc["inventories"].(map[string]any)
	for class, v := range invs {
		if r, ok := v.(map[string]any)["allocation_ratio"].(json.Number); ok {
			out[class] = string(r)
		}
	}
	return out
}

// TestAllocationRatioEcho: an inventory write answers with
// allocation_ratio as the client wrote it, an integer staying an
// integer, a float in Python's repr; reads show the stored float.
func TestAllocationRatioEcho(t *testing.T) {
	forKinds(t, func(t *testing.T, s *placementtest.Server) {
		inv := "/resource_providers/" + uR1 + "/inventories"
		must(t, s, 200, "POST", "/resource_providers", `{"uuid":"`+uR1+`","name":"r1"}`)
		steps := []struct {
			method, path, body string
			status             int
			want               map[string]string
		}{
			{"PUT", inv, `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":8,"allocation_ratio":16},` +
				`"DISK_GB":{"total":8,"allocation_ratio":1.5},"MEMORY_MB":{"total":8,"allocation_ratio":1.0},"PCPU":{"total":8}}}`, 200,
				map[string]string{"VCPU": "16", "DISK_GB": "1.5", "MEMORY_MB": "1.0", "PCPU": "1.0"}},
			{"GET", inv, "", 200, map[string]string{"VCPU": "16.0", "DISK_GB": "1.5", "MEMORY_MB": "1.0", "PCPU": "1.0"}},
			{"PUT", inv + "/VCPU", `{"resource_provider_generation":1,"total":8,"allocation_ratio":2}`, 200, map[string]string{"": "2"}},
			{"PUT", inv + "/VCPU", `{"resource_provider_generation":2,"total":8,"allocation_ratio":2.50}`, 200, map[string]string{"": "2.5"}},
			{"POST", inv, `{"resource_class":"VGPU","total":8,"allocation_ratio":3}`, 201, map[string]string{"": "3"}},
			{"POST", inv, `{"resource_class":"FPGA","total":8,"allocation_ratio":1e0}`, 201, map[string]string{"": "1.0"}},
			{"GET", inv + "/VGPU", "", 200, map[string]string{"": "3.0"}},
		}
		for _, st := range steps {
			status, _, b := call(t, s, st.method, st.path, "1.39", "admin", st.body)
			if status != st.status {
				t.Fatalf("%s: %s %s: status %d, want %d: %s", s.Kind, st.method, st.path, status, st.status, b)
			}
			if got := ratios(t, b); !maps.Equal(got, st.want) {
				t.Errorf("%s: %s %s %s: ratios %v, want %v", s.Kind, st.method, st.path, st.body, got, st.want)
			}
		}
	})
}

// TestRequestHeaderEdges: webob's strictness on media types and HEAD.
func TestRequestHeaderEdges(t *testing.T) {
	forKinds(t, func(t *testing.T, s *placementtest.Server) {
		send := func(method, path, accept, ctype, body string) (int, http.Header, []byte) {
			req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Auth-Token", "admin")
			req.Header.Set("Accept", accept)
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			req.Close = true
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, resp.Header, b
		}
		// A media range with parameters matches no offer without them.
		status, h, b := send("GET", "/resource_providers", "application/json; charset=utf-8", "", "")
		if status != 406 || h.Get("Content-Type") != "text/plain; charset=UTF-8" ||
			!strings.Contains(string(b), "(content of type application/json; charset=utf-8.") {
			t.Errorf("%s: Accept with charset: %d %q %s", s.Kind, status, h.Get("Content-Type"), b)
		}
		// The content type is compared as sent.
		status, _, b = send("POST", "/resource_providers", "application/json", "application/JSON", `{"name":"x"}`)
		if status != 415 || !strings.Contains(string(b), "The media type application/JSON is not supported, use application/json") {
			t.Errorf("%s: application/JSON: %d %s", s.Kind, status, b)
		}
		// HEAD gets webob's bare exception: no body, text/html.
		status, h, b = send("HEAD", "/resource_providers", "application/json", "", "")
		if status != 405 || h.Get("Content-Type") != "text/html; charset=UTF-8" || h.Get("Content-Length") != "0" || len(b) != 0 {
			t.Errorf("%s: HEAD: %d %q length %q %q", s.Kind, status, h.Get("Content-Type"), h.Get("Content-Length"), b)
		}
		// Path segments are read as Latin-1, as WSGI passes them.
		status, _, b = call(t, s, "GET", "/resource_classes/CUSTOM_%C3%89T%C3%89", "1.39", "admin", "")
		if status != 404 || !strings.Contains(string(b), "No such resource class CUSTOM_\u00c3\u0089T\u00c3\u0089.") &&
			!strings.Contains(string(b), `No such resource class CUSTOM_\u00c3\u0089T\u00c3\u0089.`) {
			t.Errorf("%s: non-ASCII path: %d %s", s.Kind, status, b)
		}
	})
}
