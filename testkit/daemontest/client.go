package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// Client sends requests to one base URL with one token and microversion.
type Client struct {
	// Base is the URL paths are relative to, "http://host:port".
	Base string
	// Token is sent as X-Auth-Token; "" sends none.
	Token string
	// Microversion is sent as "OpenStack-API-Version: placement" and
	// it; "" sends none.
	Microversion string
	// HTTP sends the requests; nil is http.DefaultClient.
	HTTP *http.Client
}

// At is c at microversion mv.
func (c Client) At(mv string) Client { c.Microversion = mv; return c }

// As is c with token.
func (c Client) As(token string) Client { c.Token = token; return c }

// Via is c sending through hc: a client of the test's own (timeouts,
// connection pool).
func (c Client) Via(hc *http.Client) Client { c.HTTP = hc; return c }

// Response is an answer read whole.
type Response struct {
	// Code is the status, 0 when no answer came.
	Code   int
	Header http.Header
	Body   []byte
}

// Decode decodes the body as JSON into out.
func (r Response) Decode(t testing.TB, out any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, out); err != nil {
		t.Fatalf("daemontest: decode %s: %v", r.Body, err)
	}
}

// Do sends a request. path is relative to Base, or a whole URL. body is
// sent as JSON: a string or []byte as it is, nil as no body, anything
// else encoded. A request that got no answer (a killed or stopped
// daemon) returns Code 0 and the error.
func (c Client) Do(ctx context.Context, method, path string, body any) (Response, error) {
	url := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		url = c.Base + path
	}
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return Response{}, fmt.Errorf("daemontest: %s %s: %w", method, url, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(raw))
	if err != nil {
		return Response{}, fmt.Errorf("daemontest: %w", err)
	}
	if c.Token != "" {
		req.Header.Set("X-Auth-Token", c.Token)
	}
	if c.Microversion != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+c.Microversion)
	}
	req.Header.Set("Accept", "application/json")
	if len(raw) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("daemontest: %s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("daemontest: %s %s: read the answer: %w", method, url, err)
	}
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// MustDo is Do on the test's goroutine: no answer, or a status other
// than want, fails the test.
func (c Client) MustDo(t testing.TB, want int, method, path string, body any) Response {
	t.Helper()
	r, err := c.Do(t.Context(), method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != want {
		t.Fatalf("daemontest: %s %s%s: %d, want %d: %s", method, c.Base, path, r.Code, want, r.Body)
	}
	return r
}

// Scrape fetches path (a /metrics) without token or microversion, as
// Prometheus does, and lints and parses it as promtool would.
func (c Client) Scrape(t testing.TB, path string) metricstest.Scrape {
	t.Helper()
	c.Token, c.Microversion = "", ""
	return metricstest.Parse(t, c.MustDo(t, http.StatusOK, http.MethodGet, path, nil).Body)
}
