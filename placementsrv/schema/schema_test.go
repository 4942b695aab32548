package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// testCase is one entry of testdata/cases.json, whose expectations come
// from jsonschema 4.10.3 via testdata/gen_cases.py.
type testCase struct {
	Schema   string     `json:"schema"`
	Inline   string     `json:"inline"`
	Kind     string     `json:"kind"`
	Instance string     `json:"instance"`
	Query    [][]string `json:"query"`
	Valid    bool       `json:"valid"`
	Message  string     `json:"message"`
	Error    string     `json:"error"`
}

func loadCases(t testing.TB) []testCase {
	t.Helper()
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []testCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// lookup resolves a "Name" or "Name/minor" accessor reference, minor
// naming microversion 1.minor as upstream's schema names do (V1_14).
func lookup(t testing.TB, set *Set, ref string) *jsonschema.Schema {
	t.Helper()
	name, minorText, _ := strings.Cut(ref, "/")
	minor, _ := strconv.Atoi(minorText)
	v := mv.Version{Major: 1, Minor: minor}
	var s *jsonschema.Schema
	switch name {
	case "ProviderCreate":
		s = set.ProviderCreate(v)
	case "ProviderUpdate":
		s = set.ProviderUpdate(v)
	case "ProviderListQuery":
		s = set.ProviderListQuery(v)
	case "InventoryCreate":
		s = set.InventoryCreate()
	case "InventoryUpdate":
		s = set.InventoryUpdate()
	case "InventoriesReplace":
		s = set.InventoriesReplace()
	case "ResourceClassCreate":
		s = set.ResourceClassCreate()
	case "ResourceClassUpdate":
		s = set.ResourceClassUpdate()
	case "CustomTrait":
		s = set.CustomTrait()
	case "TraitsPut":
		s = set.traitsPut
	case "ProviderTraitsSet":
		s = set.ProviderTraitsSet()
	case "TraitListQuery":
		s = set.TraitListQuery()
	case "AggregatesPut":
		s = set.AggregatesPut(v)
	case "AllocationsPut":
		s = set.AllocationsPut(v)
	case "AllocationsPost":
		s = set.AllocationsPost(v)
	case "ReshaperPost":
		s = set.ReshaperPost(v)
	case "UsagesQuery":
		s = set.UsagesQuery(v)
	case "AllocationCandidatesQuery":
		s = set.AllocationCandidatesQuery(v)
	}
	if s == nil {
		t.Fatalf("no schema for %q", ref)
	}
	return s
}

// caseSchema is the schema of a case: an accessor's, or an inline one
// compiled with Placement's format checks, as gen_cases.py validates it.
func caseSchema(t testing.TB, set *Set, c testCase) *jsonschema.Schema {
	if c.Schema == "inline" {
		s, err := jsonschema.Compile([]byte(c.Inline), formats())
		if err != nil {
			t.Fatalf("compile %s: %v", c.Inline, err)
		}
		return s
	}
	return lookup(t, set, c.Schema)
}

func TestAgainstPython(t *testing.T) {
	set := New()
	for i, c := range loadCases(t) {
		s := caseSchema(t, set, c)
		var err error
		label := c.Schema + " " + c.Inline + " " + c.Instance
		if c.Kind == "query" {
			q := url.Values{}
			for _, kv := range c.Query {
				q.Add(kv[0], kv[1])
			}
			err = s.ValidateQuery(q)
			label = c.Schema + " ?" + q.Encode()
		} else {
			err = validateJSON(s, []byte(c.Instance))
		}
		if c.Valid {
			if err != nil {
				t.Errorf("#%d %s: unexpected error: %v", i, label, err)
			}
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("#%d %s: want %q, got %v", i, label, c.Message, err)
			continue
		}
		if ve.Message != c.Message {
			t.Errorf("#%d %s:\nmessage: %q\n   want: %q", i, label, ve.Message, c.Message)
			continue
		}
		if ve.Error() != c.Error {
			t.Errorf("#%d %s:\nerror:\n%s\nwant:\n%s", i, label, ve.Error(), c.Error)
		}
	}
}

// validateJSON validates body in its key order, as a request's is.
func validateJSON(s *jsonschema.Schema, body []byte) error {
	return s.ValidateJSONContext(context.Background(), body)
}

// keysSorted reports whether every object in the JSON text lists its keys
// in sorted order (a repeated key counting where it first appears), in
// which case Go maps lose nothing.
func keysSorted(t testing.TB, text string) bool {
	type frame struct {
		object  bool
		wantKey bool // the object's next token is a key
		last    string
		seen    map[string]bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey && tok != json.Delim('}') {
			f, k := stack[n-1], tok.(string)
			if !f.seen[k] && len(f.seen) > 0 && k < f.last {
				return false
			}
			if !f.seen[k] {
				f.last, f.seen[k] = k, true
			}
			f.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// TestValidateDecoded checks the map-based entry point on the same cases,
// where key order cannot matter.
func TestValidateDecoded(t *testing.T) {
	set := New()
	n := 0
	for i, c := range loadCases(t) {
		if c.Kind != "json" || !keysSorted(t, c.Instance) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(c.Instance)))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		n++
		err := caseSchema(t, set, c).Validate(doc)
		if c.Valid {
			if err != nil {
				t.Errorf("#%d: unexpected error: %v", i, err)
			}
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) || ve.Error() != c.Error {
			t.Errorf("#%d %s: got %v\nwant %s", i, c.Instance, err, c.Error)
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases exercised", n)
	}
}

func TestValidationErrorFields(t *testing.T) {
	set := New()
	err := validateJSON(set.AllocationsPut(mv.Min), []byte(`{"allocations": [{"resource_provider": {"uuid": "1f2b3c4d-0000-4000-8000-00000000000a"}, "resources": {"VCPU": 0}}]}`))
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v", err)
	}
	if ve.Keyword != "minimum" || ve.Message != "0 is less than the minimum of 1" {
		t.Errorf("got %q %q", ve.Keyword, ve.Message)
	}
	wantPath := []any{"allocations", 0, "resources", "VCPU"}
	if len(ve.Path) != len(wantPath) {
		t.Fatalf("path %v", ve.Path)
	}
	for i := range wantPath {
		if ve.Path[i] != wantPath[i] {
			t.Errorf("path %v, want %v", ve.Path, wantPath)
		}
	}
	if !strings.Contains("JSON does not validate: "+err.Error(), "JSON does not validate: 0 is less than the minimum of 1") {
		t.Error("prefix match failed")
	}
}

// TestAccessorRanges: each versioned accessor changes its schema exactly
// at the named microversions upstream's schemas change at, keeps it up to
// the next one (or Max), and has none before the first when the route is
// younger than 1.0.
func TestAccessorRanges(t *testing.T) {
	set := New()
	for _, tc := range []struct {
		name     string
		get      func(mv.Version) *jsonschema.Schema
		versions []mv.Version
	}{
		{"ProviderCreate", set.ProviderCreate, []mv.Version{mv.Min, mv.Nested}},
		{"ProviderUpdate", set.ProviderUpdate, []mv.Version{mv.Min, mv.Nested}},
		{"ProviderListQuery", set.ProviderListQuery,
			[]mv.Version{mv.Min, mv.MemberOf, mv.ResourcesQuery, mv.Nested, mv.ProvidersRequired}},
		{"AggregatesPut", set.AggregatesPut, []mv.Version{mv.Aggregates, mv.AggregateGeneration}},
		{"AllocationsPut", set.AllocationsPut, []mv.Version{mv.Min, mv.AllocationsProjUser,
			mv.AllocationsDict, mv.ConsumerGeneration, mv.Mappings, mv.ConsumerTypes}},
		{"AllocationsPost", set.AllocationsPost,
			[]mv.Version{mv.AllocationsPost, mv.ConsumerGeneration, mv.Mappings, mv.ConsumerTypes}},
		{"ReshaperPost", set.ReshaperPost, []mv.Version{mv.Reshaper, mv.Mappings, mv.ConsumerTypes}},
		{"UsagesQuery", set.UsagesQuery, []mv.Version{mv.Usages, mv.ConsumerTypes}},
		{"AllocationCandidatesQuery", set.AllocationCandidatesQuery, []mv.Version{mv.AllocationCandidates,
			mv.CandidatesLimit, mv.CandidatesRequired, mv.CandidatesMemberOf, mv.Granular,
			mv.CandidatesInTree, mv.AnySuffix, mv.RootRequired, mv.SameSubtree}},
	} {
		if first := tc.versions[0]; first != mv.Min && tc.get(before(first)) != nil {
			t.Errorf("%s: a schema at %s, before the route's %s", tc.name, before(first), first)
		}
		seen := map[*jsonschema.Schema]bool{}
		for i, v := range tc.versions {
			s := tc.get(v)
			if s == nil || seen[s] {
				t.Errorf("%s: no new schema at %s", tc.name, v)
			}
			seen[s] = true
			last := mv.Max
			if i+1 < len(tc.versions) {
				last = before(tc.versions[i+1])
			}
			if tc.get(last) != s {
				t.Errorf("%s: the schema of %s is not kept up to %s", tc.name, v, last)
			}
		}
	}
}

// before is the microversion just before v.
func before(v mv.Version) mv.Version { return mv.Version{Major: v.Major, Minor: v.Minor - 1} }

func TestConcurrentUse(t *testing.T) {
	set := New()
	body := []byte(`{"allocations": {"1f2b3c4d-0000-4000-8000-00000000000a": {"resources": {"VCPU": 0}}}, "project_id": "p", "user_id": "u", "consumer_generation": null}`)
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			var msg string
			for j := 0; j < 50; j++ {
				var ve *jsonschema.ValidationError
				if errors.As(validateJSON(set.AllocationsPut(mv.ConsumerGeneration), body), &ve) {
					msg = ve.Message
				}
			}
			done <- msg
		}()
	}
	for i := 0; i < 8; i++ {
		if m := <-done; m != "0 is less than the minimum of 1" {
			t.Errorf("got %q", m)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"allocations": {"1f2b3c4d-0000-4000-8000-00000000000a": {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": 1, "mappings": {"a": ["x"]}, "consumer_type": "A"}`,
		`{"allocations": [{"resource_provider": {"uuid": "x"}, "resources": {"VCPU": 1e400}}]}`,
		`{"x": {"allocations": {}, "mappings": {"": []}}}`,
		`[1, true, 1.0, null, "a\u2028", {"a": [{}]}]`,
		`{"inventories": {"1f2b3c4d-0000-4000-8000-00000000000a": {"inventories": {"VCPU": {"total": 99999999999999999999}}}}, "allocations": 5}`,
		`"\ud800"`,
	} {
		f.Add([]byte(seed))
	}
	set := New()
	schemas := []*jsonschema.Schema{
		set.AllocationsPut(mv.Min), set.AllocationsPut(mv.AllocationsProjUser), set.AllocationsPut(mv.ConsumerTypes),
		set.AllocationsPost(mv.ConsumerTypes), set.ReshaperPost(mv.ConsumerTypes), set.ProviderCreate(mv.Nested),
		set.AggregatesPut(mv.Aggregates), set.InventoriesReplace(),
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range schemas {
			err := validateJSON(s, body)
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) && (ve.Message == "" || !strings.HasPrefix(ve.Error(), ve.Message)) {
				t.Fatalf("bad error %q", ve.Error())
			}
		}
	})
}

// TestValidateJSONContextStops: validation of a request whose client has
// gone ends with the context's error instead of an answer nobody reads.
func TestValidateJSONContextStops(t *testing.T) {
	set := New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	body := `{"name": "x", "uuid": [` + strings.Repeat(`"a", `, 100000) + `1]}`
	if err := set.ProviderCreate(mv.Max).ValidateJSONContext(ctx, []byte(body)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ValidateJSONContext with an ended context: %v, want context.Canceled", err)
	}
	var ve *jsonschema.ValidationError
	if err := set.ProviderCreate(mv.Max).ValidateJSONContext(context.Background(), []byte(body)); !errors.As(err, &ve) {
		t.Fatalf("ValidateJSONContext: %v, want a ValidationError", err)
	}
	if len(ve.Error()) > 16<<10 { // indentation adds 4 bytes a line to the cut renderings
		t.Errorf("the error text is %d bytes long", len(ve.Error()))
	}
}
