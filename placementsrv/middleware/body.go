package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
)

// maxBodyBytes bounds request bodies; the largest legitimate bodies (POST
// /allocations for a rack of instances, reshaper) are far smaller.
const maxBodyBytes = 64 << 20

// RequireJSON enforces Content-Type: application/json like upstream's
// require_content decorator (415 otherwise).
func (r *Request) RequireJSON() *apierror.Error {
	// webob's content_type: the header up to its first ";", compared as
	// it is (application/JSON is a 415 there).
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if mt == "application/json" {
		return nil
	}
	if mt == "" {
		mt = "None"
	}
	return &apierror.Error{
		Status: http.StatusUnsupportedMediaType,
		Code:   apierror.CodeDefault,
		Raw:    true,
		Detail: "The request media type " + mt + " is not supported by this server.\n<br /><br />\nThe media type " + mt + " is not supported, use application/json",
	}
}

// CheckAccept mirrors upstream's check_accept: an explicit Accept that does
// not admit application/json is a 406.
func (r *Request) CheckAccept() *apierror.Error {
	accept := r.Header.Get("Accept")
	if accept == "" || acceptsJSON(accept) {
		return nil
	}
	return &apierror.Error{
		Status: http.StatusNotAcceptable,
		Code:   apierror.CodeDefault,
		Raw:    true,
		Detail: "The resource could not be generated that was acceptable to your browser\n(content of type " + accept + ". <br /><br />\nOnly application/json is provided",
	}
}

func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") && !strings.Contains(params, "q=0.") {
			continue
		}
		if hasMediaParams(params) {
			continue
		}
		switch mt {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// hasMediaParams reports whether a media range's parameters (after its
// first ";") hold any before q: webob matches such a range ("application/
// json; charset=utf-8") only with an offer carrying the same parameters,
// and Placement offers plain application/json.
func hasMediaParams(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, _, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch k = strings.TrimSpace(k); {
		case strings.EqualFold(k, "q"):
			return false
		case k != "":
			return true
		}
	}
	return false
}

// DecodeJSON requires a JSON content type, reads the body, decodes it with
// numbers kept exact, and validates it against sch (when non-nil). The
// errors are upstream's: 415, "Malformed JSON: ..." and "JSON does not
// validate: ...".
func (r *Request) DecodeJSON(sch *jsonschema.Schema) (any, error) {
	body, err := r.ReadRawBody()
	if err != nil {
		return nil, err
	}
	doc, err := ParseJSON(body)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if sch != nil {
		// An error re-reads the body to keep key order, which decides the
		// wording of some messages exactly as upstream's.
		if err := sch.ValidateDecoded(r.Context(), doc, body); err != nil {
			return nil, validationError(r.Context(), err)
		}
	}
	return doc, nil
}

// validationError is the 400 for a body that failed schema validation,
// or whose validation stopped because the client went away.
func validationError(ctx context.Context, err error) error {
	var ve *jsonschema.ValidationError
	switch {
	case errors.As(err, &ve):
		return apierror.BadRequest("JSON does not validate: %s", err)
	case ctx.Err() != nil:
		return apierror.BadRequest("request abandoned by the client: %s", ctx.Err())
	}
	return apierror.BadRequest("Malformed JSON: %s", err)
}

// ParseJSON decodes exactly one JSON value with numbers as json.Number.
// Text upstream refuses (see checkJSONText) is an error here too.
func ParseJSON(body []byte) (any, error) {
	surrogate, err := checkJSONText(body)
	if err != nil {
		return nil, err
	}
	doc, err := parseJSON(body)
	if err == nil && surrogate >= 0 {
		return nil, fmt.Errorf("%s at position %d is a lone surrogate, which is not Unicode text", body[surrogate:surrogate+6], surrogate)
	}
	return doc, err
}

func parseJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, pythonWording(body, err)
	}
	if dec.More() {
		return nil, pythonWording(body, errors.New("Extra data"))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, pythonWording(body, errors.New("Extra data"))
	}
	return doc, nil
}

// pythonWording is the error json.loads gives for a body Go refused, so
// that "Malformed JSON: ..." reads as upstream's, position included. Only
// the error path pays for it. What Python would accept (NaN, Infinity)
// keeps Go's own error.
func pythonWording(body []byte, goErr error) error {
	if !utf8.Valid(body) {
		return goErr
	}
	if err := pyfmt.JSONError(string(body)); err != nil {
		return err
	}
	return goErr
}

// ReadRawBody enforces the JSON content type and returns the body bytes,
// for handlers that need more than DecodeJSON's generic document (such as
// the key order of an object).
func (r *Request) ReadRawBody() ([]byte, error) {
	if herr := r.RequireJSON(); herr != nil {
		return nil, herr
	}
	return r.readBody()
}

// ReadValidated reads the body and validates it against sch, with
// upstream's messages: "Malformed JSON: ..." and "JSON does not
// validate: ...". The content type must have been checked already.
func (r *Request) ReadValidated(sch *jsonschema.Schema) ([]byte, error) {
	body, err := r.readBody()
	if err != nil {
		return nil, err
	}
	return validateBody(r.Context(), body, sch)
}

// readBody reads the whole body, up to maxBodyBytes.
func (r *Request) readBody() ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierror.Errorf(http.StatusRequestEntityTooLarge, "request body too large")
	}
	return body, nil
}

// ValidateBody checks that body is one JSON value conforming to sch.
func ValidateBody(body []byte, sch *jsonschema.Schema) ([]byte, error) {
	return validateBody(context.Background(), body, sch)
}

// validateBody is ValidateBody for a request: it gives up once ctx ends.
func validateBody(ctx context.Context, body []byte, sch *jsonschema.Schema) ([]byte, error) {
	doc, err := ParseJSON(body)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if sch != nil {
		if err := sch.ValidateDecoded(ctx, doc, body); err != nil {
			return nil, validationError(ctx, err)
		}
	}
	return body, nil
}
