// Package difftest sends the same seeded random sequence of Placement API
// requests — valid ones that follow the server's state and deliberately
// wrong ones — to a reference upstream Placement (8.0.0 or 15.0.0) and to
// placement-syncd following the same release, and reports where their
// answers differ. The generator follows the reference's answers, so both
// servers see one sequence whatever ours says.
package difftest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Request is one generated request. Zero-valued header fields mean the
// defaults a well-behaved client sends: X-Auth-Token admin, Accept
// application/json, Content-Type application/json with a body, and
// OpenStack-API-Version placement 1.<MV> when MV >= 0.
type Request struct {
	Gen    string // the generator that made it, the trace's "gen"
	Note   string // what is special about it, the trace's "note"
	Method string
	Path   string // with its query string
	MV     int    // minor microversion, -1 for no version header
	Body   string
	// Headers overrides the defaults: a nil value removes the header.
	Headers map[string]*string
	// Bad marks deliberately wrong input (its answer must not be a 5xx).
	Bad bool
	// observe updates the generator's model from the reference's answer.
	observe func(a *Answer)
}

// Answer is one server's response.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// hv is a header value for Request.Headers.
func hv(s string) *string { return &s }

// httpRequest builds the request for a server at base, with text already
// translated for that server.
func (r *Request) httpRequest(base, path, body string) (*http.Request, error) {
	var rd io.Reader // a nil *strings.Reader would be a non-nil io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(r.Method, base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", r.Method, path, err)
	}
	h := req.Header
	h.Set("X-Auth-Token", "admin")
	h.Set("Accept", "application/json")
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	if r.MV >= 0 {
		h.Set("OpenStack-API-Version", fmt.Sprintf("placement 1.%d", r.MV))
	}
	for k, v := range r.Headers {
		if v == nil {
			h.Del(k)
		} else {
			h.Set(k, *v)
		}
	}
	return req, nil
}
