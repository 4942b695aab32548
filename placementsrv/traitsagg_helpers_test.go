package placementsrv

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// taEnv is the traits and aggregates tests' fixture: a testServer and
// the test it belongs to.
type taEnv struct {
	t *testing.T
	*testServer
}

func newTAEnv(t *testing.T) *taEnv {
	t.Helper()
	return &taEnv{t: t, testServer: startTestServer(t)}
}

// taBodyDefaults fills what a table case leaves out: microversion 1.39
// and a JSON content type, sent even with an empty body (noContentType
// sends none).
func taBodyDefaults(c *call) {
	if c.Version == "" {
		c.Version = "1.39"
	}
	if c.ContentType == "" {
		c.ContentType = "application/json"
	}
}

// mustJSON decodes a successful answer's body.
func (e *taEnv) mustJSON(r testResponse, want int, out any) {
	e.t.Helper()
	if r.Status != want {
		e.t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			e.t.Fatalf("decode %s: %v", r.Body, err)
		}
	}
}

// provider creates a provider through the store (the provider routes are
// another family's).
func (e *taEnv) provider(name, uuid string) {
	e.t.Helper()
	if _, err := e.Store.CreateProvider(context.Background(), store.NewProvider{Name: name, UUID: uuid}); err != nil {
		e.t.Fatalf("create provider: %v", err)
	}
}

// checkError asserts Placement's error document: status, title, a detail
// substring and, from 1.23, the error code.
func checkError(t *testing.T, r testResponse, status int, detail, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		// A client that does not accept JSON gets the 406 in the type it
		// asked for, as webob renders it upstream.
		if status != http.StatusNotAcceptable || !strings.HasPrefix(ct, "text/") {
			t.Fatalf("content-type %q for status %d", ct, status)
		}
		if !strings.Contains(string(r.Body), detail) {
			t.Errorf("body %q does not contain %q", r.Body, detail)
		}
		return
	}
	var doc struct {
		Errors []struct {
			Status    int     `json:"status"`
			Title     string  `json:"title"`
			Detail    string  `json:"detail"`
			Code      *string `json:"code"`
			RequestID string  `json:"request_id"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("not an error document (%v): %s", err, r.Body)
	}
	got := doc.Errors[0]
	if got.Status != status || got.Title != http.StatusText(status) || !strings.HasPrefix(got.RequestID, "req-") {
		t.Errorf("error fields: %+v", got)
	}
	if !strings.Contains(got.Detail, detail) {
		t.Errorf("detail %q does not contain %q", got.Detail, detail)
	}
	switch {
	case code == "" && got.Code != nil:
		t.Errorf("unexpected code %q", *got.Code)
	case code != "" && (got.Code == nil || *got.Code != code):
		t.Errorf("code %v, want %q", got.Code, code)
	}
}
