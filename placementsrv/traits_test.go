package placementsrv

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

const (
	taRP      = "7d2b5b7f-3c5e-4c1a-9f0e-1e7f3a1d2c4b"
	taMissing = "00000000-0000-0000-0000-000000000000"
)

var httpDateRE = regexp.MustCompile(`^\w+, \d+ \w+ \d{4} [\d:]+ GMT$`)

type providerTraits struct {
	Traits     []string `json:"traits"`
	Generation int64    `json:"resource_provider_generation"`
}

// traitsFixture makes CUSTOM_A, CUSTOM_B and a provider holding CUSTOM_A
// at generation 1.
func traitsFixture(t *testing.T) *taEnv {
	e := newTAEnv(t)
	for _, n := range []string{"CUSTOM_A", "CUSTOM_B"} {
		e.mustJSON(e.do(t, call{Method: "PUT", Path: "/traits/" + n, Version: "1.6"}), http.StatusCreated, nil)
	}
	e.provider("rp", taRP)
	var got providerTraits
	e.mustJSON(e.do(t, call{Method: "PUT", Path: "/resource_providers/" + taRP + "/traits", Version: "1.6", ContentType: "application/json",
		Body: `{"traits": ["CUSTOM_A"], "resource_provider_generation": 0}`}), http.StatusOK, &got)
	if got.Generation != 1 || len(got.Traits) != 1 {
		t.Fatalf("fixture: %+v", got)
	}
	return e
}

// traitsSnapshot is everything a failed traits request must leave alone:
// the provider's traits and generation and the custom traits.
func (e *taEnv) traitsSnapshot() string {
	e.t.Helper()
	a := e.do(e.t, call{Method: "GET", Path: "/resource_providers/" + taRP + "/traits", Version: "1.6"})
	b := e.do(e.t, call{Method: "GET", Path: "/traits?name=startswith:CUSTOM_", Version: "1.6"})
	if a.Status != 200 || b.Status != 200 {
		e.t.Fatalf("snapshot: %d %s / %d %s", a.Status, a.Body, b.Status, b.Body)
	}
	return string(a.Body) + "|" + string(b.Body)
}

func TestPutProviderTraitsBadInput(t *testing.T) {
	e := traitsFixture(t)
	before := e.traitsSnapshot()
	path := "/resource_providers/" + taRP + "/traits"
	long := strings.Repeat("A", 256)
	tests := []struct {
		name   string
		req    call
		status int
		detail string
		code   string
	}{
		{"malformed", call{Body: `{"traits": [`}, 400, "Malformed JSON", apierror.CodeDefault},
		{"trailing data", call{Body: `{"traits": [], "resource_provider_generation": 1} x`}, 400, "Malformed JSON", apierror.CodeDefault},
		{"empty body", call{Body: ""}, 400, "Malformed JSON", apierror.CodeDefault},
		{"wrong content type", call{ContentType: "text/plain", Body: `{}`}, 415, "The media type text/plain is not supported, use application/json", apierror.CodeDefault},
		{"no content type", call{ContentType: "-", Body: `{}`}, 400, "content-type header required when content-length > 0", apierror.CodeDefault},
		{"array body", call{Body: `[]`}, 400, "JSON does not validate: [] is not of type 'object'", apierror.CodeDefault},
		{"traits not a list", call{Body: `{"traits": "invalid_type", "resource_provider_generation": 1}`}, 400, "'invalid_type' is not of type 'array'", apierror.CodeDefault},
		{"trait not a string", call{Body: `{"traits": [1], "resource_provider_generation": 1}`}, 400, "1 is not of type 'string'", apierror.CodeDefault},
		{"empty trait", call{Body: `{"traits": [""], "resource_provider_generation": 1}`}, 400, "'' is too short", apierror.CodeDefault},
		{"over-long trait", call{Body: `{"traits": ["` + long + `"], "resource_provider_generation": 1}`}, 400, "is too long", apierror.CodeDefault},
		{"generation not an integer", call{Body: `{"traits": [], "resource_provider_generation": "x"}`}, 400, "'x' is not of type 'integer'", apierror.CodeDefault},
		{"generation with a fraction", call{Body: `{"traits": [], "resource_provider_generation": 1.5}`}, 400, "1.5 is not of type 'integer'", apierror.CodeDefault},
		{"generation null", call{Body: `{"traits": [], "resource_provider_generation": null}`}, 400, "None is not of type 'integer'", apierror.CodeDefault},
		{"no generation", call{Body: `{"traits": ["CUSTOM_B"]}`}, 400, "'resource_provider_generation' is a required property", apierror.CodeDefault},
		{"no traits", call{Body: `{"resource_provider_generation": 1}`}, 400, "'traits' is a required property", apierror.CodeDefault},
		{"unknown property", call{Body: `{"traits": [], "resource_provider_generation": 1, "extra": 1}`}, 400, "Additional properties are not allowed ('extra' was unexpected)", apierror.CodeDefault},
		{"stale generation", call{Body: `{"traits": ["CUSTOM_B"], "resource_provider_generation": 0}`}, 409, "Resource provider's generation already changed. Please update the generation and try again.", apierror.CodeConcurrentUpdate},
		{"future generation", call{Body: `{"traits": [], "resource_provider_generation": 2}`}, 409, "generation already changed", apierror.CodeConcurrentUpdate},
		{"huge generation", call{Body: `{"traits": [], "resource_provider_generation": 99999999999999999999}`}, 409, "generation already changed", apierror.CodeConcurrentUpdate},
		{"huge float generation", call{Body: `{"traits": [], "resource_provider_generation": 1e30}`}, 409, "generation already changed", apierror.CodeConcurrentUpdate},
		{"stale generation before 1.23", call{Version: "1.22", Body: `{"traits": [], "resource_provider_generation": 0}`}, 409, "generation already changed", ""},
		{"unknown trait", call{Body: `{"traits": ["CUSTOM_B", "CUSTOM_NOPE"], "resource_provider_generation": 1}`}, 400, "No such trait CUSTOM_NOPE", apierror.CodeDefault},
		{"unknown traits", call{Body: `{"traits": ["CUSTOM_Y", "CUSTOM_X", "CUSTOM_Y"], "resource_provider_generation": 1}`}, 400, "No such trait CUSTOM_X, CUSTOM_Y", apierror.CodeDefault},
		{"generation checked before traits", call{Body: `{"traits": ["CUSTOM_NOPE"], "resource_provider_generation": 7}`}, 409, "generation already changed", apierror.CodeConcurrentUpdate},
		{"before 1.6", call{Version: "1.5", Body: `{"traits": [], "resource_provider_generation": 1}`}, 404, "The resource could not be found.", ""},
		{"unknown provider", call{Path: "/resource_providers/" + taMissing + "/traits", Body: `{"traits": [], "resource_provider_generation": 1}`}, 404, "No resource provider with uuid " + taMissing + " found", apierror.CodeDefault},
		{"not admin", call{Headers: map[string]string{"X-Auth-Token": "user"}, Body: `{"traits": [], "resource_provider_generation": 1}`}, 403, "Policy does not allow placement:resource_providers:traits:update to be performed.", apierror.CodeDefault},
		{"body checked before provider", call{Path: "/resource_providers/" + taMissing + "/traits", Body: `{}`}, 400, "is a required property", apierror.CodeDefault},
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
			if after := e.traitsSnapshot(); after != before {
				t.Errorf("state changed:\n%s\n%s", before, after)
			}
		})
	}
}

func TestPutProviderTraits(t *testing.T) {
	e := traitsFixture(t)
	path := "/resource_providers/" + taRP + "/traits"
	put := func(body string) providerTraits {
		t.Helper()
		var got providerTraits
		e.mustJSON(e.do(t, call{Method: "PUT", Path: path, Version: "1.39", ContentType: "application/json", Body: body}), 200, &got)
		return got
	}
	// Same set: no generation change, as upstream.
	if got := put(`{"traits": ["CUSTOM_A"], "resource_provider_generation": 1}`); got.Generation != 1 {
		t.Errorf("unchanged set bumped generation: %+v", got)
	}
	// An integral float is an integer to JSON Schema and to Python.
	got := put(`{"traits": ["HW_CPU_X86_SSE", "CUSTOM_B", "CUSTOM_A", "CUSTOM_B"], "resource_provider_generation": 1.0}`)
	if got.Generation != 2 || strings.Join(got.Traits, ",") != "CUSTOM_A,CUSTOM_B,HW_CPU_X86_SSE" {
		t.Errorf("PUT answer %+v", got)
	}
	var read providerTraits
	e.mustJSON(e.do(t, call{Method: "GET", Path: path, Version: "1.6"}), 200, &read)
	// Read order is trait id order: standard traits were created first.
	if read.Generation != 2 || strings.Join(read.Traits, ",") != "HW_CPU_X86_SSE,CUSTOM_A,CUSTOM_B" {
		t.Errorf("GET answer %+v", read)
	}
	var assoc struct{ Traits []string }
	e.mustJSON(e.do(t, call{Method: "GET", Path: "/traits?associated=TRUE", Version: "1.6"}), 200, &assoc)
	if strings.Join(assoc.Traits, ",") != "HW_CPU_X86_SSE,CUSTOM_A,CUSTOM_B" {
		t.Errorf("associated traits %v", assoc.Traits)
	}
	if got := put(`{"traits": [], "resource_provider_generation": 2}`); got.Generation != 3 || got.Traits == nil || len(got.Traits) != 0 {
		t.Errorf("clearing: %+v", got)
	}
}

func TestDeleteProviderTraits(t *testing.T) {
	e := traitsFixture(t)
	path := "/resource_providers/" + taRP + "/traits"
	for i, wantGen := range []int64{2, 2} { // the second delete changes nothing
		r := e.do(t, call{Method: "DELETE", Path: path, Version: "1.39"})
		if r.Status != 204 || len(r.Body) != 0 || r.Header.Get("Content-Type") != "" || r.Header.Get("Last-Modified") != "" {
			t.Fatalf("delete %d: %d %v %s", i, r.Status, r.Header, r.Body)
		}
		var got providerTraits
		e.mustJSON(e.do(t, call{Method: "GET", Path: path, Version: "1.6"}), 200, &got)
		if got.Generation != wantGen || len(got.Traits) != 0 {
			t.Errorf("after delete %d: %+v", i, got)
		}
	}
	checkError(t, e.do(t, call{Method: "DELETE", Path: "/resource_providers/" + taMissing + "/traits", Version: "1.39"}), 404,
		"No resource provider with uuid "+taMissing+" found", apierror.CodeDefault)
	checkError(t, e.do(t, call{Method: "DELETE", Path: path, Version: "1.5"}), 404, "The resource could not be found.", "")
}

// wantInvalidTraitName is upstream's fixed text for a PUT /traits/{name}
// whose name is not a valid custom trait.
const wantInvalidTraitName = `The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"`

func TestPutTraitBadNames(t *testing.T) {
	e := traitsFixture(t)
	before := e.traitsSnapshot()
	names := []struct{ name, path string }{
		{"no custom prefix", "TRAIT_X"},
		{"standard trait", "HW_CPU_X86_SSE"},
		{"colon", "CUSTOM_ABC:1"},
		{"lower case", "CUSTOM_abc"},
		{"prefix only", "CUSTOM_"},
		{"lower case prefix", "custom_ABC"},
		{"space", "CUSTOM_A%20B"},
		{"inner newline", "CUSTOM_A%0AB"},
		{"two final newlines", "CUSTOM_NEW%0A%0A"},
		{"non-ASCII", "CUSTOM_%C3%84"},
		{"over-long", "CUSTOM_" + strings.Repeat("A", 249)},
	}
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, e.do(t, call{Method: "PUT", Path: "/traits/" + tc.path, Version: "1.39"}), 400, wantInvalidTraitName, apierror.CodeDefault)
			if after := e.traitsSnapshot(); after != before {
				t.Errorf("state changed:\n%s\n%s", before, after)
			}
		})
	}
	t.Run("one final newline is dropped by routing", func(t *testing.T) {
		if r := e.do(t, call{Method: "PUT", Path: "/traits/CUSTOM_A%0A", Version: "1.39"}); r.Status != 204 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if after := e.traitsSnapshot(); after != before {
			t.Errorf("state changed:\n%s\n%s", before, after)
		}
	})
	t.Run("before 1.6", func(t *testing.T) {
		checkError(t, e.do(t, call{Method: "PUT", Path: "/traits/CUSTOM_NEW", Version: "1.5"}), 404, "The resource could not be found.", "")
		checkError(t, e.do(t, call{Method: "GET", Path: "/traits/CUSTOM_NEW", Version: "1.6"}), 404, "No such trait(s): CUSTOM_NEW.", "")
	})
}

func TestPutTrait(t *testing.T) {
	e := newTAEnv(t)
	name := "CUSTOM_" + strings.Repeat("Z", 248) // 255 characters: the longest allowed
	r := e.do(t, call{Method: "PUT", Path: "/traits/" + name, Version: "1.14"})
	if r.Status != 201 || r.Header.Get("Location") != e.URL+"/traits/"+name || r.Header.Get("Content-Type") != "" ||
		r.Header.Get("Last-Modified") != "" || r.Header.Get("Cache-Control") != "" {
		t.Fatalf("create: %d %v %s", r.Status, r.Header, r.Body)
	}
	r = e.do(t, call{Method: "PUT", Path: "/traits/" + name, Version: "1.15"})
	if r.Status != 204 || r.Header.Get("Location") != e.URL+"/traits/"+name || !httpDateRE.MatchString(r.Header.Get("Last-Modified")) ||
		r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("exists: %d %v %s", r.Status, r.Header, r.Body)
	}
	r = e.do(t, call{Method: "GET", Path: "/traits/" + name, Version: "1.15"})
	if r.Status != 204 || !httpDateRE.MatchString(r.Header.Get("Last-Modified")) || len(r.Body) != 0 {
		t.Fatalf("get: %d %v %s", r.Status, r.Header, r.Body)
	}
}

func TestDeleteTraitBadInput(t *testing.T) {
	e := traitsFixture(t)
	before := e.traitsSnapshot()
	tests := []struct {
		name, trait, mv string
		status          int
		detail, code    string
	}{
		{"standard", "HW_CPU_X86_SSE", "1.39", 400, "Cannot delete standard trait HW_CPU_X86_SSE.", apierror.CodeDefault},
		{"in use", "CUSTOM_A", "1.39", 409, "The trait CUSTOM_A is in use by a resource provider.", apierror.CodeDefault},
		{"unknown", "CUSTOM_NOPE", "1.39", 404, "No such trait(s): CUSTOM_NOPE.", apierror.CodeDefault},
		{"unknown non-custom", "NOPE", "1.39", 404, "No such trait(s): NOPE.", apierror.CodeDefault},
		{"before 1.6", "CUSTOM_B", "1.5", 404, "The resource could not be found.", ""},
	}
	t.Run("not admin", func(t *testing.T) {
		r := e.do(t, call{Method: "DELETE", Path: "/traits/CUSTOM_B", Version: "1.39", Headers: map[string]string{"X-Auth-Token": "user"}})
		checkError(t, r, 403, "Policy does not allow placement:traits:delete to be performed.", apierror.CodeDefault)
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, e.do(t, call{Method: "DELETE", Path: "/traits/" + tc.trait, Version: tc.mv}), tc.status, tc.detail, tc.code)
			if after := e.traitsSnapshot(); after != before {
				t.Errorf("state changed:\n%s\n%s", before, after)
			}
		})
	}
	r := e.do(t, call{Method: "DELETE", Path: "/traits/CUSTOM_B", Version: "1.39"})
	if r.Status != 204 || r.Header.Get("Last-Modified") != "" {
		t.Fatalf("delete: %d %v", r.Status, r.Header)
	}
	checkError(t, e.do(t, call{Method: "GET", Path: "/traits/CUSTOM_B", Version: "1.39"}), 404, "No such trait(s): CUSTOM_B.", apierror.CodeDefault)
}

func TestListTraitsBadQuery(t *testing.T) {
	e := traitsFixture(t)
	tests := []struct {
		name, query, mv string
		header          map[string]string
		status          int
		detail          string
	}{
		{"no operator", "name=in_abc", "1.6", nil, 400, `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "in_abc"`},
		{"associated", "associated=xyz", "1.6", nil, 400, `The query parameter "associated" only accepts "true" or "false"`},
		{"unknown parameter", "invalid=abc", "1.6", nil, 400, "Invalid query string parameters: Additional properties are not allowed ('invalid' was unexpected)"},
		{"before 1.6", "", "1.5", nil, 404, "The resource could not be found."},
		{"not acceptable", "", "1.6", map[string]string{"Accept": "text/plain"}, 406, "Only application/json is provided"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, e.do(t, call{Method: "GET", Path: "/traits?" + tc.query, Version: tc.mv, Headers: tc.header}), tc.status, tc.detail, "")
		})
	}
}

func TestListTraitsFilters(t *testing.T) {
	e := traitsFixture(t)
	for _, n := range []string{"CUSTOM_Z1", "CUSTOM_AB", "CUSTOM_XAB"} {
		e.mustJSON(e.do(t, call{Method: "PUT", Path: "/traits/" + n, Version: "1.6"}), 201, nil)
	}
	tests := []struct{ query, want string }{
		{"name=in:CUSTOM_Z1,CUSTOM_B,CUSTOM_NOPE,CUSTOM_A,CUSTOM_B", "CUSTOM_A,CUSTOM_B,CUSTOM_Z1"},
		{"name=startswith:CUSTOM_", "CUSTOM_A,CUSTOM_B,CUSTOM_Z1,CUSTOM_AB,CUSTOM_XAB"},
		// Placement filters with LIKE: case-insensitive, "_" and "%" are wildcards.
		{"name=startswith:custom_a", "CUSTOM_A,CUSTOM_AB"},
		{"name=startswith:CUSTOM%25AB", "CUSTOM_AB,CUSTOM_XAB"},
		{"name=startswith:CUSTOM__B", "CUSTOM_AB"},
		{"name=in:", ""},
		{"name=startswith:CUSTOM_&associated=true", "CUSTOM_A"},
		{"name=startswith:CUSTOM_&associated=False", "CUSTOM_B,CUSTOM_Z1,CUSTOM_AB,CUSTOM_XAB"},
		{"name=in:CUSTOM_A,CUSTOM_B&associated=false", "CUSTOM_B"},
		// The last of repeated parameters wins, as with webob.
		{"name=in:CUSTOM_A&name=in:CUSTOM_B", "CUSTOM_B"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			var got struct{ Traits []string }
			e.mustJSON(e.do(t, call{Method: "GET", Path: "/traits?" + tc.query, Version: "1.6"}), 200, &got)
			if got.Traits == nil || strings.Join(got.Traits, ",") != tc.want {
				t.Errorf("got %q, want %q", got.Traits, tc.want)
			}
		})
	}
	// An unknown operator filters nothing.
	var all, other struct{ Traits []string }
	e.mustJSON(e.do(t, call{Method: "GET", Path: "/traits", Version: "1.6"}), 200, &all)
	e.mustJSON(e.do(t, call{Method: "GET", Path: "/traits?name=foo:bar", Version: "1.6"}), 200, &other)
	if len(all.Traits) < 300 || strings.Join(all.Traits, ",") != strings.Join(other.Traits, ",") {
		t.Errorf("unfiltered lists differ: %d vs %d", len(all.Traits), len(other.Traits))
	}
}

func TestTraitsCacheHeaders(t *testing.T) {
	e := traitsFixture(t)
	path := "/resource_providers/" + taRP + "/traits"
	reqs := []call{
		{Method: "GET", Path: "/traits"},
		{Method: "GET", Path: "/traits?name=in:CUSTOM_NOPE"}, // empty: now
		{Method: "GET", Path: "/traits/CUSTOM_A"},
		{Method: "PUT", Path: "/traits/CUSTOM_A"},
		{Method: "GET", Path: path},
		{Method: "PUT", Path: path, ContentType: "application/json", Body: `{"traits": ["CUSTOM_A"], "resource_provider_generation": 1}`},
	}
	for _, q := range reqs {
		for _, mv := range []string{"1.14", "1.15"} {
			q.Version = mv
			r := e.do(t, q)
			if r.Status >= 300 {
				t.Fatalf("%s %s: %d %s", q.Method, q.Path, r.Status, r.Body)
			}
			lm, cc := r.Header.Get("Last-Modified"), r.Header.Get("Cache-Control")
			if mv == "1.14" && (lm != "" || cc != "") || mv == "1.15" && (!httpDateRE.MatchString(lm) || cc != "no-cache") {
				t.Errorf("%s %s at %s: last-modified %q cache-control %q", q.Method, q.Path, mv, lm, cc)
			}
		}
	}
}

func TestGetProviderTraitsNotFound(t *testing.T) {
	e := newTAEnv(t)
	msg := "No resource provider with uuid " + taMissing + " found"
	checkError(t, e.do(t, call{Method: "GET", Path: "/resource_providers/" + taMissing + "/traits", Version: "1.39"}), 404, msg+": "+msg, apierror.CodeDefault)
	checkError(t, e.do(t, call{Method: "GET", Path: "/resource_providers/" + taMissing + "/traits", Version: "1.5"}), 404, "The resource could not be found.", "")
	checkError(t, e.do(t, call{Method: "GET", Path: "/resource_providers/" + taMissing + "/traits", Version: "1.6", Headers: map[string]string{"Accept": "text/html"}}), 406, "Only application/json is provided", "")
}
