// Package jsonschema is a JSON Schema validator that reports failures with
// exactly the text Python's jsonschema 4.10.3 produces.
//
// Clients match substrings of error details such as "Failed validating
// 'maxLength'" or "JSON does not validate: 0 is less than the minimum of
// 1", so the validator reproduces jsonschema's Draft 2020-12 semantics (the
// default when a schema has no "$schema"), its best_match error selection
// and the Python repr/pprint rendering of values, for the keywords it
// supports. Compile rejects any other keyword that affects validation
// rather than silently ignoring it.
//
// Schemas come from JSON text (Compile) or are built in Go as Python code
// builds them as dicts (Obj, Clone, Put, ...; CompileObject); the format
// checks are the caller's (Formats). The package knows no particular API:
// the schemas it validates with live with their API. Compiled schemas are
// immutable and safe for concurrent use.
package jsonschema

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	root *node
}

// Compile builds a Schema from a JSON document, keeping its key order
// (which decides error precedence, as it does in jsonschema), its format
// keywords checked by formats.
func Compile(schemaJSON []byte, formats Formats) (*Schema, error) {
	v, err := decodeOrdered(context.Background(), schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return compileValue(v, formats)
}

// CompileObject builds a Schema from one built with Obj. The Schema keeps
// o: do not change o afterwards.
func CompileObject(o *Object, formats Formats) (*Schema, error) {
	return compileValue(o, formats)
}

func compileValue(v any, formats Formats) (*Schema, error) {
	n, err := compile(v)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	applyFormats(n, formats)
	return &Schema{root: n}, nil
}

// Validate checks a document decoded by encoding/json (with UseNumber, so
// that ints and floats stay distinct as in Python; plain float64 values are
// treated as Python floats). Go maps are unordered, so where Python would
// show keys in request order, sorted order is used; ValidateJSONContext avoids
// that. The result is nil, a *ValidationError, or an error for Go values
// that JSON decoding cannot produce.
func (s *Schema) Validate(doc any) error {
	v, err := fromGo(doc)
	if err != nil {
		return err
	}
	return s.validateValue(v)
}

// ValidateJSONContext decodes body and validates it, keeping the key order
// of the request so that messages match Python's byte for byte. Malformed
// JSON is reported as a plain error (never a *ValidationError); handlers
// should have rejected it already with their own "Malformed JSON" message.
// It stops, returning ctx's error, once ctx ends (the client has gone). A
// document nested deeper than MaxDepth is ErrTooDeep.
func (s *Schema) ValidateJSONContext(ctx context.Context, body []byte) error {
	v, err := decodeOrdered(ctx, body)
	if err != nil {
		return err
	}
	e := bestMatch(s.root.iterErrors(v))
	if e == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return newValidationError(e)
}

// ValidateDecoded is ValidateJSONContext for a body already decoded into
// doc with numbers kept exact (json.Decoder.UseNumber). Whether a
// document is valid does not depend on its key order; only the wording of
// an error does. So doc is validated as it is, and body is read again in
// its key order only to word an error.
func (s *Schema) ValidateDecoded(ctx context.Context, doc any, body []byte) error {
	if v, err := fromGo(doc); err == nil && len(s.root.iterErrors(v)) == 0 {
		return nil
	}
	return s.ValidateJSONContext(ctx, body)
}

// ValidateQuery validates query parameters the way a Python service
// validating webob's dict(req.GET) does: as an object of strings in which a
// repeated parameter takes its last value.
func (s *Schema) ValidateQuery(q url.Values) error {
	return s.validateValue(fromQuery(q))
}

func (s *Schema) validateValue(v any) error {
	e := bestMatch(s.root.iterErrors(v))
	if e == nil {
		return nil
	}
	return newValidationError(e)
}

// ValidationError is the error jsonschema.validate would raise.
type ValidationError struct {
	// Message is jsonschema's ValidationError.message, e.g.
	// "'name' is a required property".
	Message string
	// Keyword is the failing schema keyword ("required", "maxLength", ...).
	Keyword string
	// Path locates the failing instance value: string keys and int indices.
	// Like upstream's relative_path it is relative to the enclosing
	// anyOf/oneOf value when the error was chosen from inside one.
	Path []any
	// SchemaPath is the path to Keyword within the (sub)schema, likewise
	// relative.
	SchemaPath []any

	text string
}

// Error returns the same text as Python's str(ValidationError): the message,
// the failing keyword with its schema, and the offending instance.
func (e *ValidationError) Error() string { return e.text }

func newValidationError(e *vError) *ValidationError {
	schemaLoc := e.schemaPath
	if len(schemaLoc) > 0 {
		schemaLoc = schemaLoc[:len(schemaLoc)-1]
	}
	var b strings.Builder
	b.WriteString(e.message)
	b.WriteString("\n\nFailed validating ")
	b.WriteString(strRepr(e.keyword))
	b.WriteString(" in ")
	b.WriteString(formatAsIndex("schema", schemaLoc))
	b.WriteString(":\n    ")
	b.WriteString(indentTail(pformat(e.schema.src, math.MaxInt)))
	b.WriteString("\n\nOn ")
	b.WriteString(formatAsIndex("instance", e.path))
	b.WriteString(":\n    ")
	b.WriteString(indentTail(pformat(e.instance, maxPformat)))
	return &ValidationError{
		Message:    e.message,
		Keyword:    e.keyword,
		Path:       append([]any(nil), e.path...),
		SchemaPath: append([]any(nil), e.schemaPath...),
		text:       strings.TrimRight(b.String(), " \t\n\r\v\f"),
	}
}

// indentTail indents every line after the first by four spaces, as the
// textwrap.indent/dedent dance in jsonschema's __str__ ends up doing.
func indentTail(s string) string {
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			lines[i] = "    " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
