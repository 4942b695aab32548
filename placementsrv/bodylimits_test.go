package placementsrv

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// postProviders sends body as is to POST /resource_providers of srv and
// returns the status, the error detail and how many bytes the whole
// process allocated meanwhile (the server runs in this process).
func postProviders(t *testing.T, srv *testServer, body string) (status int, detail string, respLen int, allocated uint64) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/resource_providers", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("OpenStack-API-Version", "placement latest")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// No client timeout: under -race a large body takes a while, and the
	// assertions are about memory, not time.
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	var doc struct {
		Errors []struct {
			Status int    `json:"status"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Errors) != 1 || doc.Errors[0].Status != resp.StatusCode {
		t.Fatalf("answer is not Placement's error document (%v): %.300s", err, b)
	}
	return resp.StatusCode, doc.Errors[0].Detail, len(b), after.TotalAlloc - before.TotalAlloc
}

// TestPathologicalBodies: bodies whose schema error upstream renders at a
// cost of size times depth get a 400 whose size and cost stay within a
// small multiple of the body (decoding alone takes some 20 bytes per
// body byte for a list of short strings).
func TestPathologicalBodies(t *testing.T) {
	srv := startTestServer(t)
	const mib = 1 << 20
	for _, tc := range []struct {
		name, body string
		wantDetail []string
	}{{
		// The body of issue 19: 9000 levels around a 1e6-byte string.
		name:       "deep",
		body:       `{"name":"x","uuid":` + strings.Repeat("[", 9000) + `"` + strings.Repeat("a", 1e6) + `"` + strings.Repeat("]", 9000) + `}`,
		wantDetail: []string{"Malformed JSON: nesting deeper than 64 levels at position 82"},
	}, {
		name: "deep within the limit",
		body: `{"name":"x","uuid":` + strings.Repeat("[", 60) + `"` + strings.Repeat("a b ", 25e4) + `"` + strings.Repeat("]", 60) + `}`,
		wantDetail: []string{
			"JSON does not validate: " + strings.Repeat("[", 60) + "'a b a b",
			"is not of type 'string'",
			"Failed validating 'type' in schema['properties']['uuid']",
			"On instance['uuid']:",
		},
	}, {
		name:       "wide",
		body:       `{"name":"x","uuid":[` + strings.Repeat(`"a b c d e f g h",`, 3e5) + `1]}`,
		wantDetail: []string{"JSON does not validate: ['a b c d e f g h', 'a b c d e f g h'", "...", "is not of type 'string'"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			status, detail, n, allocated := postProviders(t, srv, tc.body)
			if status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", status)
			}
			for _, want := range tc.wantDetail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail lacks %q: %.400s", want, detail)
				}
			}
			if n > 32<<10 {
				t.Errorf("answer is %d bytes, want at most 32 KiB", n)
			}
			if limit := uint64(32*len(tc.body) + 16*mib); allocated > limit {
				t.Errorf("the request allocated %d MiB, want at most %d MiB for a %d KiB body", allocated/mib, limit/mib, len(tc.body)>>10)
			}
			t.Logf("body %d KiB: answer %d bytes, %d MiB allocated", len(tc.body)>>10, n, allocated/mib)
		})
	}
}
