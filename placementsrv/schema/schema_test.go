package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
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

// lookup resolves a "Name" or "Name/minor" accessor reference.
func lookup(t testing.TB, set *Set, ref string) *Schema {
	t.Helper()
	name, mv, _ := strings.Cut(ref, "/")
	minor, _ := strconv.Atoi(mv)
	var s *Schema
	switch name {
	case "ProviderCreate":
		s = set.ProviderCreate(minor)
	case "ProviderUpdate":
		s = set.ProviderUpdate(minor)
	case "ProviderListQuery":
		s = set.ProviderListQuery(minor)
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
		s = set.AggregatesPut(minor)
	case "AllocationsPut":
		s = set.AllocationsPut(minor)
	case "AllocationsPost":
		s = set.AllocationsPost(minor)
	case "ReshaperPost":
		s = set.ReshaperPost(minor)
	case "UsagesQuery":
		s = set.UsagesQuery(minor)
	case "AllocationCandidatesQuery":
		s = set.AllocationCandidatesQuery(minor)
	}
	if s == nil {
		t.Fatalf("no schema for %q", ref)
	}
	return s
}

func caseSchema(t testing.TB, set *Set, c testCase) *Schema {
	if c.Schema == "inline" {
		s, err := Compile([]byte(c.Inline))
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
			err = s.validateJSON([]byte(c.Instance))
		}
		if c.Valid {
			if err != nil {
				t.Errorf("#%d %s: unexpected error: %v", i, label, err)
			}
			continue
		}
		var ve *ValidationError
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

// keysSorted reports whether every object in the JSON text lists its keys
// in sorted order, in which case Go maps lose nothing.
func keysSorted(t testing.TB, text string) bool {
	v, err := decodeOrdered(context.Background(), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case *object:
			if !sort.StringsAreSorted(x.keys) {
				return false
			}
			for _, k := range x.keys {
				if !walk(x.m[k]) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	return walk(v)
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
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Error() != c.Error {
			t.Errorf("#%d %s: got %v\nwant %s", i, c.Instance, err, c.Error)
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases exercised", n)
	}
}

func TestValidateGoTypes(t *testing.T) {
	s, err := Compile([]byte(`{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ok := []any{
		map[string]any{"a": 1, "b": []string{"x"}},
		map[string]any{"a": int64(1)},
		map[string]any{"a": 2.0},
		map[string]string{"c": "d"},
	}
	for _, v := range ok {
		if err := s.Validate(v); err != nil {
			t.Errorf("%#v: %v", v, err)
		}
	}
	var ve *ValidationError
	if err := s.Validate(map[string]any{"a": 2.5}); !errors.As(err, &ve) || ve.Message != "2.5 is not of type 'integer'" {
		t.Errorf("got %v", err)
	}
	if err := s.Validate(map[string]any{"a": struct{}{}}); err == nil || errors.As(err, &ve) {
		t.Errorf("unsupported type: got %v", err)
	}
	if err := s.validateJSON([]byte(`{"a": `)); err == nil || errors.As(err, &ve) {
		t.Errorf("malformed JSON: got %v", err)
	}
	if err := s.validateJSON([]byte(`{} {}`)); err == nil {
		t.Errorf("trailing data accepted")
	}
}

func TestValidationErrorFields(t *testing.T) {
	set := New()
	err := set.AllocationsPut(0).validateJSON([]byte(`{"allocations": [{"resource_provider": {"uuid": "1f2b3c4d-0000-4000-8000-00000000000a"}, "resources": {"VCPU": 0}}]}`))
	var ve *ValidationError
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

func TestAccessorRanges(t *testing.T) {
	set := New()
	for _, tc := range []struct {
		got, want *Schema
	}{
		{set.AllocationsPut(7), set.AllocationsPut(0)},
		{set.AllocationsPut(11), set.AllocationsPut(8)},
		{set.AllocationsPut(27), set.AllocationsPut(12)},
		{set.AllocationsPut(33), set.AllocationsPut(28)},
		{set.AllocationsPut(37), set.AllocationsPut(34)},
		{set.AllocationsPut(39), set.AllocationsPut(38)},
		{set.AllocationsPost(27), set.AllocationsPost(13)},
		{set.ReshaperPost(33), set.ReshaperPost(30)},
		{set.ProviderListQuery(2), set.ProviderListQuery(0)},
		{set.ProviderListQuery(17), set.ProviderListQuery(14)},
		{set.AllocationCandidatesQuery(15), set.AllocationCandidatesQuery(10)},
		{set.AllocationCandidatesQuery(39), set.AllocationCandidatesQuery(36)},
		{set.UsagesQuery(37), set.UsagesQuery(9)},
		{set.AggregatesPut(18), set.AggregatesPut(1)},
		{set.ProviderCreate(13), set.ProviderCreate(0)},
	} {
		if tc.got != tc.want || tc.got == nil {
			t.Errorf("range mismatch")
		}
	}
	if set.AllocationsPost(12) != nil || set.ReshaperPost(29) != nil ||
		set.UsagesQuery(8) != nil || set.AllocationCandidatesQuery(9) != nil {
		t.Error("schemas returned for microversions predating the route")
	}
}

func TestCompileRejectsUnsupported(t *testing.T) {
	for _, s := range []string{
		`{"allOf": [{}]}`, `{"$ref": "#/x"}`, `{"type": 1}`, `{"pattern": "("}`,
		`[]`, `{"properties": {"a": 1}}`, `{"minLength": "x"}`,
	} {
		if _, err := Compile([]byte(s)); err == nil {
			t.Errorf("%s compiled", s)
		}
	}
}

func TestFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", 1.5: "1.5", 1e16: "1e+16", 1e15: "1000000000000000.0",
		0.0001: "0.0001", 0.00001: "1e-05", 123456789.123: "123456789.123",
		3.40282e+38: "3.40282e+38", -2.5e-7: "-2.5e-07", 1.7976931348623157e308: "1.7976931348623157e+308",
	} {
		if got := floatRepr(f); got != want {
			t.Errorf("floatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	set := New()
	body := []byte(`{"allocations": {"1f2b3c4d-0000-4000-8000-00000000000a": {"resources": {"VCPU": 0}}}, "project_id": "p", "user_id": "u", "consumer_generation": null}`)
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			var msg string
			for j := 0; j < 50; j++ {
				var ve *ValidationError
				if errors.As(set.AllocationsPut(28).validateJSON(body), &ve) {
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
	schemas := []*Schema{
		set.AllocationsPut(0), set.AllocationsPut(8), set.AllocationsPut(38),
		set.AllocationsPost(38), set.ReshaperPost(38), set.ProviderCreate(14),
		set.AggregatesPut(1), set.InventoriesReplace(),
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range schemas {
			err := s.validateJSON(body)
			var ve *ValidationError
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
	if err := set.ProviderCreate(20).ValidateJSONContext(ctx, []byte(body)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ValidateJSONContext with an ended context: %v, want context.Canceled", err)
	}
	var ve *ValidationError
	if err := set.ProviderCreate(20).ValidateJSONContext(context.Background(), []byte(body)); !errors.As(err, &ve) {
		t.Fatalf("ValidateJSONContext: %v, want a ValidationError", err)
	}
	if len(ve.Error()) > 16<<10 { // indentation adds 4 bytes a line to the cut renderings
		t.Errorf("the error text is %d bytes long", len(ve.Error()))
	}
}
