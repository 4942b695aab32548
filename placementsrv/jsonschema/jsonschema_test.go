package jsonschema

import (
	"context"
	"errors"
	"testing"
)

// The engine's messages are checked against Python's jsonschema by the
// goldens of the schemas built on it (placementsrv/schema's
// testdata/cases.json, inline schemas included); these tests cover what
// those cannot reach.

func validateJSON(s *Schema, body string) error {
	return s.ValidateJSONContext(context.Background(), []byte(body))
}

func TestValidateGoTypes(t *testing.T) {
	s, err := Compile([]byte(`{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}}}`), nil)
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
	if err := validateJSON(s, `{"a": `); err == nil || errors.As(err, &ve) {
		t.Errorf("malformed JSON: got %v", err)
	}
	if err := validateJSON(s, `{} {}`); err == nil {
		t.Errorf("trailing data accepted")
	}
}

func TestCompileRejectsUnsupported(t *testing.T) {
	for _, s := range []string{
		`{"allOf": [{}]}`, `{"$ref": "#/x"}`, `{"type": 1}`, `{"pattern": "("}`,
		`[]`, `{"properties": {"a": 1}}`, `{"minLength": "x"}`,
	} {
		if _, err := Compile([]byte(s), nil); err == nil {
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

// The expectations are Python's jsonschema 4.10.3
// FormatChecker().conforms(s, "uuid") on Debian 12.
func TestUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"12345678-1234-1234-1234-123456789abc":          true,
		"12345678-1234-1234-1234-123456789ABC":          true,
		"12345678123412341234123456789abc":              false,
		"{12345678-1234-1234-1234-123456789abc}":        false,
		"urn:uuid:12345678-1234-1234-1234-123456789abc": false,
		"12345678-1234-1234-1234-12345678-9abc":         true,
		"12345678-1234-1234-1234-1234_56789ab":          true,
		"12345678-1234-1234-1234-123456789ab":           false,
		"12345678-1234-1234-1234-123456789abg":          false,
		"0x345678-1234-1234-1234-123456789abc":          true,
		"12345678-1234-1234-1234-123456789abc ":         false,
		"":                                              false,
		"1234-5678-1234-1234-123456789abc":              false,
	} {
		if got := UUID(s); got != want {
			t.Errorf("UUID(%q) = %v, want %v", s, got, want)
		}
	}
	if !UUID(7) {
		t.Error("a non-string must pass, as jsonschema's checker lets it")
	}
}

// TestFormats: a format is asserted only by a check the caller gives for
// its name, at every depth, as with jsonschema's format_checker.
func TestFormats(t *testing.T) {
	doc := []byte(`{"type": "object", "properties": {"a": {"anyOf": [{"type": "null"}, {"format": "uuid"}]}, "b": {"format": "other"}}}`)
	body := `{"a": "not-a-uuid", "b": "x"}`
	plain, err := Compile(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validateJSON(plain, body); err != nil {
		t.Errorf("without format checks: %v", err)
	}
	checked, err := Compile(doc, Formats{"uuid": UUID})
	if err != nil {
		t.Fatal(err)
	}
	if err := validateJSON(checked, `{"a": "12345678-1234-1234-1234-123456789abc", "b": "x"}`); err != nil {
		t.Errorf("a uuid refused: %v", err)
	}
	var ve *ValidationError
	if err := validateJSON(checked, body); !errors.As(err, &ve) || ve.Message != "'not-a-uuid' is not valid under any of the given schemas" {
		t.Errorf("with the uuid check: %v", err)
	}
}

// TestBuild: a schema built in Go as Python builds a dict (deep copies,
// key order kept) validates as the same schema written in JSON.
func TestBuild(t *testing.T) {
	base := Obj("type", "object",
		"properties", Obj("name", Obj("type", "string", "maxLength", 3)),
		"required", []string{"name"},
		"additionalProperties", false)
	derived := base.Clone()
	derived.At("properties").Put("size", Obj("type", "integer", "minimum", 1))
	derived.AppendRequired("size")
	derived.RemoveRequired("name")
	derived.At("properties").Del("name")
	fromJSON, err := Compile([]byte(`{"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}, "required": ["size"], "additionalProperties": false}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	built, err := CompileObject(derived, nil)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := CompileObject(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"size": 0}`, `{"size": 2}`, `{"name": "x", "size": 2}`, `{}`, `[]`} {
		want, got := validateJSON(fromJSON, body), validateJSON(built, body)
		if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
			t.Errorf("%s: built %v, from JSON %v", body, got, want)
		}
	}
	if err := validateJSON(orig, `{"name": "abcd"}`); err == nil {
		t.Error("the clone's changes reached the original")
	}
	if err := validateJSON(orig, `{"name": "abc"}`); err != nil {
		t.Errorf("the original: %v", err)
	}
}
