package reconciler

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// endpointDo sends one request to the reconciler's endpoint through a
// real HTTP server; token "" sends none, a token starting with "Bearer "
// is sent as Authorization. Answers are JSON except the router's plain
// 404 and 405.
func endpointDo(t *testing.T, h http.Handler, method, path, token, body string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(token, "Bearer "):
		req.Header.Set("Authorization", token)
	case token != "":
		req.Header.Set("X-Auth-Token", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound && ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, string(b)
}

// TestEndpoint_Token: with a token configured, a request without it or
// with a wrong one is refused with 401 (there is no 403: the endpoint has
// one credential and no roles), before routing; the right token is
// accepted as X-Auth-Token or as a bearer token.
func TestEndpoint_Token(t *testing.T) {
	t.Parallel()
	f := newRunnerFixture(t, Options{Token: "s3cret", Jobs: map[string]string{JobAggregates: "@every 1h"}})
	h := f.r.Handler()
	tests := []struct {
		name, method, path, token string
		status                    int
	}{
		{"missing", http.MethodGet, "/v1/gate", "", http.StatusUnauthorized},
		{"wrong", http.MethodGet, "/v1/gate", "s3cre", http.StatusUnauthorized},
		{"wrong bearer", http.MethodGet, "/v1/gate", "Bearer nope", http.StatusUnauthorized},
		{"missing, heartbeat", http.MethodPost, "/v1/services", "", http.StatusUnauthorized},
		{"missing, run", http.MethodPost, "/v1/jobs/aggregates/run", "", http.StatusUnauthorized},
		{"missing, unknown path", http.MethodGet, "/v1/nothing", "", http.StatusUnauthorized},
		{"right", http.MethodGet, "/v1/gate", "s3cret", http.StatusOK},
		{"right bearer", http.MethodGet, "/v1/jobs", "Bearer s3cret", http.StatusOK},
		{"right, unknown path", http.MethodGet, "/v1/nothing", "s3cret", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := endpointDo(t, h, tt.method, tt.path, tt.token, "")
			if status != tt.status {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, status, body, tt.status)
			}
			if status == http.StatusUnauthorized && !strings.Contains(body, `"error": "a valid token is required"`) {
				t.Errorf("401 body = %s", body)
			}
		})
	}
	if h := f.history(t, JobAggregates); len(h) != 0 {
		t.Errorf("an unauthenticated run request ran the job: %+v", h)
	}
	if got := testutil.ToFloat64(f.r.m.heartbeats); got != 0 {
		t.Errorf("an unauthenticated heartbeat was counted")
	}
}

// TestEndpoint_GateServicesJobs drives the endpoint without a token:
// heartbeats move the gate, bad heartbeats are refused with 400, and the
// jobs are listed and run.
func TestEndpoint_GateServicesJobs(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Second)
	// Heartbeats count only when authenticated: the endpoint has a token.
	const tok = "s3cret"
	f := newRunnerFixture(t, Options{Now: clock.Now, Token: tok, Jobs: map[string]string{JobAggregates: "@every 5m", JobOwnerTraits: "0 */10 * * * *"}})
	h := f.r.Handler()
	gate := func() GateState {
		t.Helper()
		status, body := endpointDo(t, h, http.MethodGet, "/v1/gate", tok, "")
		if status != http.StatusOK {
			t.Fatalf("GET /v1/gate: %d %s", status, body)
		}
		var g GateState
		if err := json.Unmarshal([]byte(body), &g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	heartbeat := func(body string, want int, wantBody string) {
		t.Helper()
		status, got := endpointDo(t, h, http.MethodPost, "/v1/services", tok, body)
		if status != want || !strings.Contains(got, wantBody) {
			t.Fatalf("POST /v1/services %s: %d %s, want %d containing %q", body, status, got, want, wantBody)
		}
	}

	if g := gate(); g.Open || g.Computes != 0 || g.Required != MinComputeVersionOwnerTrait || !strings.HasPrefix(g.Reason, "Nova's list of nova-compute services not read yet") {
		t.Fatalf("initial gate = %+v", g)
	}
	// Nova lists c1 and c2; their versions come from the heartbeats.
	f.e.nova.setServices([]doubleService{{Host: "c1", Binary: ComputeBinary}, {Host: "c2", Binary: ComputeBinary}})
	if err := f.r.RefreshComputes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := gate(); g.Open || g.Computes != 2 || !slices.Equal(g.Unknown, []string{"c1", "c2"}) {
		t.Fatalf("gate before any heartbeat = %+v, want closed, both unknown", g)
	}
	heartbeat(`{"host":"c1","binary":"nova-compute","version":72}`, http.StatusNoContent, "")
	heartbeat(`{"host":"c2","binary":"nova-compute","version":73}`, http.StatusNoContent, "")
	if g := gate(); g.Open || g.Computes != 2 || g.MinVersion != 72 || len(g.Behind) != 1 || g.Behind[0] != "c1" {
		t.Fatalf("gate with c1 at 72 = %+v, want closed, c1 behind", g)
	}

	// Refused heartbeats change nothing.
	for _, tt := range []struct{ name, body, want string }{
		{"unknown field", `{"host":"c1","binary":"nova-compute","versoin":73}`, `unknown field \"versoin\"`},
		{"missing host", `{"binary":"nova-compute","version":73}`, "host is required"},
		{"missing binary", `{"host":"c1","version":73}`, "binary is required"},
		{"negative version", `{"host":"c1","binary":"nova-compute","version":-1}`, "version must not be negative"},
		{"malformed", `{"host":"c1",`, `"error"`},
		{"wrong type", `{"host":"c1","binary":"nova-compute","version":"73"}`, "cannot unmarshal string"},
		{"trailing data", `{"host":"c1","binary":"nova-compute","version":73} {"host":"c1"}`, "one JSON object"},
		{"empty", ``, `"error"`},
	} {
		t.Run(tt.name, func(t *testing.T) { heartbeat(tt.body, http.StatusBadRequest, tt.want) })
	}
	if g := gate(); g.Open || g.MinVersion != 72 {
		t.Fatalf("a refused heartbeat moved the gate: %+v", g)
	}
	if got := testutil.ToFloat64(f.r.m.heartbeats); got != 2 {
		t.Errorf("heartbeats_total = %v, want 2 (refused ones not counted)", got)
	}

	heartbeat(`{"host":"c1","binary":"nova-compute","version":73}`, http.StatusNoContent, "")
	if g := gate(); !g.Open || g.MinVersion != 73 || g.Computes != 2 {
		t.Fatalf("gate after upgrading c1 = %+v, want open", g)
	}
	if got := testutil.ToFloat64(f.r.m.gateOpen); got != 1 {
		t.Errorf("owner_nova_gate_open = %v, want 1", got)
	}

	status, body := endpointDo(t, h, http.MethodGet, "/v1/services", tok, "")
	var services struct {
		Services []ServiceRecord `json:"services"`
	}
	if err := json.Unmarshal([]byte(body), &services); status != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/services: %d %s %v", status, body, err)
	}
	if len(services.Services) != 2 || services.Services[0].Host != "c1" || services.Services[0].Version != 73 || services.Services[0].UpdatedAt.IsZero() {
		t.Fatalf("services = %+v", services.Services)
	}

	// Jobs: listed with their schedules before any run; run one now.
	status, body = endpointDo(t, h, http.MethodGet, "/v1/jobs", tok, "")
	var jobs struct {
		Jobs []JobStatus `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(body), &jobs); status != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/jobs: %d %s %v", status, body, err)
	}
	if len(jobs.Jobs) != 2 || jobs.Jobs[0].Name != JobAggregates || jobs.Jobs[0].Schedule != "@every 5m" ||
		jobs.Jobs[1].Name != JobOwnerTraits || jobs.Jobs[1].Schedule != "0 */10 * * * *" || len(jobs.Jobs[0].Runs) != 0 {
		t.Fatalf("jobs = %+v", jobs.Jobs)
	}
	status, body = endpointDo(t, h, http.MethodPost, "/v1/jobs/"+JobOwnerTraits+"/run", tok, "")
	var rec RunRecord
	if err := json.Unmarshal([]byte(body), &rec); status != http.StatusOK || err != nil {
		t.Fatalf("POST run: %d %s %v", status, body, err)
	}
	// The gate is open: both compute node providers are stamped. The fake
	// clock ticks once inside the run: the pre-filter's arming time.
	if rec.Job != JobOwnerTraits || rec.Trigger != TriggerDemand || rec.Result != ResultOK || rec.Changes != 2 || rec.Duration != 2*time.Second {
		t.Fatalf("run record = %+v", rec)
	}
	if got := f.e.traits(t, f.h1); !sameSet(got, []string{"COMPUTE_NODE", TraitOwnerNova}) {
		t.Errorf("h1 traits after the run: %v", got)
	}
	status, body = endpointDo(t, h, http.MethodGet, "/v1/jobs", tok, "")
	if err := json.Unmarshal([]byte(body), &jobs); status != http.StatusOK || err != nil || len(jobs.Jobs[1].Runs) != 1 || jobs.Jobs[1].Runs[0].Changes != 2 {
		t.Fatalf("GET /v1/jobs after the run: %d %s", status, body)
	}

	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/v1/jobs/nope/run", http.StatusNotFound},
		{http.MethodGet, "/v1/jobs/aggregates/run", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/v1/gate", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/services", http.StatusMethodNotAllowed},
	} {
		if status, body := endpointDo(t, h, tt.method, tt.path, tok, ""); status != tt.status {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, status, body, tt.status)
		}
	}
}
