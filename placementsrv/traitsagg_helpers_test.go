package placementsrv

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// taEnv is a server on a real SQLite file for the traits and aggregates
// tests.
type taEnv struct {
	t   *testing.T
	url string
	st  store.Store
	db  string
}

func newTAEnv(t *testing.T) *taEnv {
	t.Helper()
	db := filepath.Join(t.TempDir(), "placement.db")
	st, err := dbstore.OpenFile(context.Background(), db, dbstore.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := New(Options{Store: st})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &taEnv{t: t, url: ts.URL, st: st, db: db}
}

// taReq is one request; an empty ctype sends no Content-Type.
type taReq struct {
	method, path, mv, ctype, body string
	header                        map[string]string
}

// bodyDefaults fills what a table case leaves out: microversion 1.39 and a
// JSON content type ("-" sends none).
func (q *taReq) bodyDefaults() {
	if q.mv == "" {
		q.mv = "1.39"
	}
	switch q.ctype {
	case "":
		q.ctype = "application/json"
	case "-":
		q.ctype = ""
	}
}

type taResp struct {
	status int
	header http.Header
	body   []byte
}

func (e *taEnv) do(q taReq) taResp {
	e.t.Helper()
	var body io.Reader
	if q.body != "" {
		body = strings.NewReader(q.body)
	}
	req, err := http.NewRequest(q.method, e.url+q.path, body)
	if err != nil {
		e.t.Fatalf("build request: %v", err)
	}
	req.Header.Set("X-Auth-Token", "admin")
	if q.mv != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+q.mv)
	}
	if q.ctype != "" {
		req.Header.Set("Content-Type", q.ctype)
	}
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	return taResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// mustJSON decodes a successful answer's body.
func (e *taEnv) mustJSON(r taResp, want int, out any) {
	e.t.Helper()
	if r.status != want {
		e.t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			e.t.Fatalf("decode %s: %v", r.body, err)
		}
	}
}

// provider creates a provider through the store (the provider routes are
// another family's).
func (e *taEnv) provider(name, uuid string) {
	e.t.Helper()
	if _, err := e.st.CreateProvider(context.Background(), store.NewProvider{Name: name, UUID: uuid}); err != nil {
		e.t.Fatalf("create provider: %v", err)
	}
}

// checkError asserts Placement's error document: status, title, a detail
// substring and, from 1.23, the error code.
func checkError(t *testing.T, r taResp, status int, detail, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		// A client that does not accept JSON gets the 406 in the type it
		// asked for, as webob renders it upstream.
		if status != http.StatusNotAcceptable || !strings.HasPrefix(ct, "text/") {
			t.Fatalf("content-type %q for status %d", ct, status)
		}
		if !strings.Contains(string(r.body), detail) {
			t.Errorf("body %q does not contain %q", r.body, detail)
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
	if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("not an error document (%v): %s", err, r.body)
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
