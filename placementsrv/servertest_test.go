package placementsrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// testServer is a real Placement server on 127.0.0.1 over a fresh SQLite
// file, served through Server.Run as in production. Any family's tests may
// use it.
type testServer struct {
	URL    string // base URL, no trailing slash
	Client *http.Client
	Store  store.Store
	Path   string // the SQLite file, if the store is one
	stop   func() // stops the server and closes the store; idempotent
}

// startTestServer starts a server for the duration of the test.
func startTestServer(t testing.TB) *testServer {
	t.Helper()
	return startServerOpts(t, nil, nil)
}

// startServerOpts is startTestServer with the store's and the server's
// options edited first (either edit may be nil).
func startServerOpts(t testing.TB, storeEdit func(*ledger.Options), edit func(*Options)) *testServer {
	t.Helper()
	return startServerFile(t, filepath.Join(t.TempDir(), "placement.db"), storeEdit, edit)
}

// startServerFile is startServerOpts over the database at path.
func startServerFile(t testing.TB, path string, storeEdit func(*ledger.Options), edit func(*Options)) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var lopts ledger.Options
	if storeEdit != nil {
		storeEdit(&lopts)
	}
	st, err := dbstore.OpenFile(ctx, path, dbstore.Options{Migrate: true, Rules: lopts})
	if err != nil {
		cancel()
		t.Fatalf("open store: %v", err)
	}
	ts := serveStore(t, st, func() { cancel(); _ = st.Close() }, edit)
	ts.Path = path
	return ts
}

// serveStore serves st through Server.Run on 127.0.0.1 until the test
// ends or ts.stop; closeStore runs once the server has stopped.
func serveStore(t testing.TB, st store.Store, closeStore func(), edit func(*Options)) *testServer {
	t.Helper()
	opts := Options{Store: st}
	if edit != nil {
		edit(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		closeStore()
		t.Fatalf("new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeStore()
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, 5*time.Second) }()
	ts := &testServer{
		URL:    "http://" + ln.Addr().String(),
		Client: &http.Client{Timeout: 30 * time.Second},
		Store:  st,
	}
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("server: %v", err)
			}
			ts.Client.CloseIdleConnections()
			closeStore()
		})
	}
	t.Cleanup(ts.stop)
	return ts
}

// restart stops ts and starts a plain server over the same database
// file, as after a process restart.
func (ts *testServer) restart(t testing.TB) *testServer {
	t.Helper()
	ts.stop()
	return startServerFile(t, ts.Path, nil, nil)
}

// call is one request to a testServer. Headers default to the admin token;
// Version, when set, goes in OpenStack-API-Version; a non-empty Body is
// sent as application/json unless ContentType or Headers say otherwise.
// ContentType, when set, is sent even with an empty body, and
// noContentType sends none even with a body. NoToken sends no
// X-Auth-Token unless Headers name one.
type call struct {
	Method, Path string
	Version      string
	Body         string
	ContentType  string
	NoToken      bool
	Headers      map[string]string
}

// noContentType as call.ContentType sends a body without a Content-Type.
const noContentType = "-"

// testResponse is what a call got back.
type testResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value, failing the test if it is
// not JSON.
func (r testResponse) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.Body)
	}
	return v
}

// do performs c and reads the whole answer, failing the test on a
// transport error.
func (ts *testServer) do(t testing.TB, c call) testResponse {
	t.Helper()
	r, err := ts.send(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send performs c and reads the whole answer. It is the one place the
// package's tests build requests; do and must wrap it, and goroutines
// other than the test's call it directly, as they may not stop the test.
func (ts *testServer) send(c call) (testResponse, error) {
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequest(c.Method, ts.URL+c.Path, body)
	if err != nil {
		return testResponse{}, fmt.Errorf("build request %s %s: %w", c.Method, c.Path, err)
	}
	if !c.NoToken {
		req.Header.Set("X-Auth-Token", "admin")
	}
	if c.Version != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+c.Version)
	}
	switch {
	case c.ContentType == noContentType:
	case c.ContentType != "":
		req.Header.Set("Content-Type", c.ContentType)
	case c.Body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client.Do(req)
	if err != nil {
		return testResponse{}, fmt.Errorf("%s %s: %w", c.Method, c.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return testResponse{}, fmt.Errorf("%s %s: read body: %w", c.Method, c.Path, err)
	}
	return testResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// must performs c and fails the test unless the status is want.
func (ts *testServer) must(t testing.TB, want int, c call) testResponse {
	t.Helper()
	r := ts.do(t, c)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", c.Method, c.Path, r.Status, want, r.Body)
	}
	return r
}

// errorDetail returns the detail and code of a Placement error document,
// failing the test if the body is not one.
func errorDetail(t testing.TB, r testResponse) (detail, code string) {
	t.Helper()
	var doc struct {
		Errors []struct {
			Status int    `json:"status"`
			Detail string `json:"detail"`
			Code   string `json:"code"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("not a Placement error document: %s", r.Body)
	}
	if doc.Errors[0].Status != r.Status {
		t.Fatalf("error status %d in a %d response", doc.Errors[0].Status, r.Status)
	}
	return doc.Errors[0].Detail, doc.Errors[0].Code
}
