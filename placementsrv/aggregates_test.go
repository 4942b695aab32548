package placementsrv

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

const (
	agg1 = "f918801a-5e54-4bee-9095-09a9d0c786b8"
	agg2 = "a893eb5c-e2a0-4251-ab26-f71d3b0cfc0b"
	agg3 = "282d469e-29e2-4a8a-8f2e-31b3202b696a"
)

type providerAggregates struct {
	Aggregates []string `json:"aggregates"`
	Generation *int64   `json:"resource_provider_generation"`
}

// aggregatesFixture makes a provider in agg1 and agg2 at generation 1.
func aggregatesFixture(t *testing.T) *taEnv {
	e := newTAEnv(t)
	e.provider("rp", taRP)
	var got providerAggregates
	e.mustJSON(e.do(t, call{Method: "PUT", Path: "/resource_providers/" + taRP + "/aggregates", Version: "1.19", ContentType: "application/json",
		Body: `{"aggregates": ["` + agg1 + `", "` + agg2 + `"], "resource_provider_generation": 0}`}), 200, &got)
	if got.Generation == nil || *got.Generation != 1 {
		t.Fatalf("fixture: %+v", got)
	}
	return e
}

// aggregatesSnapshot is what a failed aggregates request must leave alone:
// the provider's aggregates and generation, and the aggregate table (no
// aggregate may be created by a request that failed).
func (e *taEnv) aggregatesSnapshot() string {
	e.t.Helper()
	r := e.do(e.t, call{Method: "GET", Path: "/resource_providers/" + taRP + "/aggregates", Version: "1.19"})
	if r.Status != 200 {
		e.t.Fatalf("snapshot: %d %s", r.Status, r.Body)
	}
	db, err := sql.Open("sqlite3", "file:"+e.Path+"?mode=ro")
	if err != nil {
		e.t.Fatalf("open %s: %v", e.Path, err)
	}
	defer db.Close()
	var n int
	var uuids sql.NullString
	if err := db.QueryRowContext(context.Background(), `SELECT count(*), group_concat(uuid) FROM placement_aggregates`).Scan(&n, &uuids); err != nil {
		e.t.Fatalf("count aggregates: %v", err)
	}
	return string(r.Body) + "|" + uuids.String
}

func TestPutAggregatesBadInput(t *testing.T) {
	e := aggregatesFixture(t)
	before := e.aggregatesSnapshot()
	path := "/resource_providers/" + taRP + "/aggregates"
	env := func(aggs, gen string) string {
		return `{"aggregates": ` + aggs + `, "resource_provider_generation": ` + gen + `}`
	}
	tests := []struct {
		name   string
		req    call
		status int
		detail string
		code   string
	}{
		{"malformed", call{Body: `{"bad", "not json"}`}, 400, "Malformed JSON", apierror.CodeDefault},
		{"empty body", call{Body: ""}, 400, "Malformed JSON", apierror.CodeDefault},
		{"wrong content type", call{ContentType: "text/plain", Body: `[]`}, 415, "The media type text/plain is not supported, use application/json", apierror.CodeDefault},
		{"no content type", call{ContentType: "-", Body: `[]`}, 400, "content-type header required when content-length > 0", apierror.CodeDefault},
		{"list at 1.19", call{Body: `["` + agg3 + `"]`}, 400, "JSON does not validate: ['" + agg3 + "'] is not of type 'object'", apierror.CodeDefault},
		{"envelope before 1.19", call{Version: "1.18", Body: env(`["`+agg3+`"]`, "1")}, 400, "JSON does not validate", ""},
		{"not uuids", call{Body: env(`["harry", "sally"]`, "1")}, 400, "'harry' is not a 'uuid'", apierror.CodeDefault},
		{"not uuids before 1.19", call{Version: "1.1", Body: `["` + agg3 + `", "harry"]`}, 400, "'harry' is not a 'uuid'", ""},
		{"short uuid", call{Body: env(`["`+agg3[:35]+`"]`, "1")}, 400, "is not a 'uuid'", apierror.CodeDefault},
		{"uuid not a string", call{Body: env(`[5]`, "1")}, 400, "5 is not of type 'string'", apierror.CodeDefault},
		{"duplicates", call{Body: env(`["`+agg3+`", "`+agg3+`"]`, "1")}, 400, "has non-unique elements", apierror.CodeDefault},
		{"duplicates before 1.19", call{Version: "1.18", Body: `["` + agg3 + `", "` + agg3 + `"]`}, 400, "has non-unique elements", ""},
		{"aggregates not a list", call{Body: env(`"x"`, "1")}, 400, "'x' is not of type 'array'", apierror.CodeDefault},
		{"no generation", call{Body: `{"aggregates": ["` + agg3 + `"]}`}, 400, "'resource_provider_generation' is a required property", apierror.CodeDefault},
		{"no aggregates", call{Body: `{"resource_provider_generation": 1}`}, 400, "'aggregates' is a required property", apierror.CodeDefault},
		{"generation not an integer", call{Body: env(`[]`, `"1"`)}, 400, "'1' is not of type 'integer'", apierror.CodeDefault},
		{"unknown property", call{Body: `{"aggregates": [], "resource_provider_generation": 1, "x": 1}`}, 400, "Additional properties are not allowed ('x' was unexpected)", apierror.CodeDefault},
		{"stale generation", call{Body: env(`["`+agg3+`"]`, "0")}, 409, "Resource provider's generation already changed. Please update the generation and try again.", apierror.CodeConcurrentUpdate},
		{"huge generation", call{Body: env(`["`+agg3+`"]`, "18446744073709551617")}, 409, "generation already changed", apierror.CodeConcurrentUpdate},
		{"stale generation at 1.19", call{Version: "1.19", Body: env(`[]`, "5")}, 409, "generation already changed", ""},
		{"before 1.1", call{Version: "1.0", Body: `[]`}, 404, "The resource could not be found.", ""},
		{"content type checked before version", call{Version: "1.0", ContentType: "text/plain", Body: `[]`}, 415, "use application/json", ""},
		{"not admin", call{Headers: map[string]string{"X-Auth-Token": "user"}, Body: env(`["`+agg3+`"]`, "1")}, 403, "Policy does not allow placement:resource_providers:aggregates:update to be performed.", apierror.CodeDefault},
		{"unknown provider", call{Path: "/resource_providers/" + taMissing + "/aggregates", Body: env(`[]`, "0")}, 404, "No resource provider with uuid " + taMissing + " found", apierror.CodeDefault},
		{"provider checked before body", call{Path: "/resource_providers/" + taMissing + "/aggregates", Body: `{`}, 404, "No resource provider with uuid", apierror.CodeDefault},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.req
			q.Method = "PUT"
			if q.Path == "" {
				q.Path = path
			}
			taBodyDefaults(&q)
			checkError(t, e.do(t, q), tc.status, tc.detail, tc.code)
			if after := e.aggregatesSnapshot(); after != before {
				t.Errorf("state changed:\n%s\n%s", before, after)
			}
		})
	}
}

func TestPutAggregates(t *testing.T) {
	e := aggregatesFixture(t)
	path := "/resource_providers/" + taRP + "/aggregates"
	put := func(mv, body string) (providerAggregates, http.Header) {
		t.Helper()
		r := e.do(t, call{Method: "PUT", Path: path, Version: mv, ContentType: "application/json", Body: body})
		var got providerAggregates
		e.mustJSON(r, 200, &got)
		return got, r.Header
	}
	get := func(mv string) providerAggregates {
		t.Helper()
		var got providerAggregates
		e.mustJSON(e.do(t, call{Method: "GET", Path: path, Version: mv}), 200, &got)
		return got
	}
	// Before 1.19: bare list, no generation in or out, no increment; the
	// answer echoes the request's order.
	got, h := put("1.14", `["`+agg3+`", "`+agg1+`"]`)
	if got.Generation != nil || strings.Join(got.Aggregates, ",") != agg3+","+agg1 || h.Get("Last-Modified") != "" || h.Get("Cache-Control") != "" {
		t.Errorf("1.14 PUT: %+v %v", got, h)
	}
	// Reads list aggregates in the order they were first seen.
	if g := get("1.19"); *g.Generation != 1 || strings.Join(g.Aggregates, ",") != agg1+","+agg3 {
		t.Errorf("GET after 1.14 PUT: %+v", g)
	}
	// From 1.19 every PUT increments, even without a change.
	got, h = put("1.19", `{"aggregates": ["`+agg3+`", "`+agg1+`"], "resource_provider_generation": 1}`)
	if *got.Generation != 2 || strings.Join(got.Aggregates, ",") != agg3+","+agg1 || !httpDateRE.MatchString(h.Get("Last-Modified")) || h.Get("Cache-Control") != "no-cache" {
		t.Errorf("1.19 PUT: %+v %v", got, h)
	}
	got, _ = put("1.39", `{"aggregates": [], "resource_provider_generation": 2}`)
	if *got.Generation != 3 || got.Aggregates == nil || len(got.Aggregates) != 0 {
		t.Errorf("clearing PUT: %+v", got)
	}
	if g := get("1.1"); g.Generation != nil || g.Aggregates == nil || len(g.Aggregates) != 0 {
		t.Errorf("GET at 1.1: %+v", g)
	}
	r := e.do(t, call{Method: "GET", Path: path, Version: "1.15"})
	if !httpDateRE.MatchString(r.Header.Get("Last-Modified")) || r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET at 1.15 headers: %v", r.Header)
	}
	// Aggregates outlive their memberships, as upstream.
	if s := e.aggregatesSnapshot(); !strings.Contains(s, agg3) {
		t.Errorf("aggregate rows: %s", s)
	}
}

func TestGetAggregatesBadInput(t *testing.T) {
	e := aggregatesFixture(t)
	path := "/resource_providers/" + taRP + "/aggregates"
	checkError(t, e.do(t, call{Method: "GET", Path: "/resource_providers/" + taMissing + "/aggregates", Version: "1.39"}), 404, "No resource provider with uuid "+taMissing+" found", apierror.CodeDefault)
	checkError(t, e.do(t, call{Method: "GET", Path: path, Version: "1.0"}), 404, "The resource could not be found.", "")
	checkError(t, e.do(t, call{Method: "GET", Path: path, Version: "1.0", Headers: map[string]string{"Accept": "text/plain"}}), 406, "Only application/json is provided", "")
	checkError(t, e.do(t, call{Method: "POST", Path: path, Version: "1.39"}), 405, "The method POST is not allowed for this resource.", apierror.CodeDefault)
}
