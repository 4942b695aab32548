package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// byteCounter is a reverse proxy that counts the requests it forwards,
// the writes among them and the bytes of their answers.
type byteCounter struct {
	URL                    string
	requests, writes, body atomic.Int64
}

func newByteCounter(t testing.TB, target string) *byteCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	bc := &byteCounter{}
	rp := httputil.NewSingleHostReverseProxy(u)
	// The reference's uWSGI drops idle connections without warning.
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	rp.ModifyResponse = func(r *http.Response) error {
		r.Body = &countingBody{ReadCloser: r.Body, n: &bc.body}
		return nil
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bc.requests.Add(1)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			bc.writes.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	bc.URL = hs.URL
	return bc
}

func (bc *byteCounter) reset() { bc.requests.Store(0); bc.writes.Store(0); bc.body.Store(0) }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// PassCostEnv sets the fleet sizes of TestPassCost against our server
// ("1000,4000"); the reference runs at the smaller only.
const PassCostEnv = "PLACEMENT_SYNCD_PASS_COST"

// TestPassCost measures, at two fleet sizes, what an idle pass and the
// first pass after a restart (with a state file) cost in requests to
// Placement and bytes answered, while Placement also holds twice as many
// providers of other hosts: neither may grow with the cloud.
func TestPassCost(t *testing.T) {
	sizes := []int{300, 1200}
	if v := os.Getenv(PassCostEnv); v != "" {
		sizes = nil
		for _, s := range splitComma(v) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want sizes like 1000,4000", PassCostEnv, v)
			}
			sizes = append(sizes, n)
		}
	}
	for _, kind := range placementtest.Kinds() {
		for i, n := range sizes {
			if kind == placementtest.Reference && i > 0 {
				continue // about 50 writes a second: the smaller size only
			}
			t.Run(fmt.Sprintf("%s/%d", kind, n), func(t *testing.T) { testPassCost(t, kind, n) })
		}
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func testPassCost(t *testing.T, kind string, n int) {
	srv := placementtest.Start(t, kind)
	for i := range 2 * n { // other hosts' providers
		srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.20",
			map[string]string{"uuid": nodeUUID(41, i), "name": "other-" + strconv.Itoa(i)})
	}
	bc := newByteCounter(t, srv.URL)
	double := ironictest.NewIronicDouble(t, fleetNodes(n)...)
	ds := []drivers.Driver{ironicDriver(t, double)}
	state := filepath.Join(t.TempDir(), "agent-state.json")
	opts := func(o *agent.Options) { o.RefreshInterval = -1; o.StateFile = state }
	pass := func(e *env, what string) (requests, writes, bytes int64) {
		t.Helper()
		bc.reset()
		if err := e.agent.SyncOnce(t.Context()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		requests, writes, bytes = bc.requests.Load(), bc.writes.Load(), bc.body.Load()
		t.Logf("%s placement, %d nodes + %d other providers, %s: %d requests (%d writes), %d bytes answered",
			kind, n, 2*n, what, requests, writes, bytes)
		return requests, writes, bytes
	}
	e := newEnv(t, bc.URL, ds, opts)
	pass(e, "first pass")
	fi, err := os.Stat(state)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state file: %d bytes for %d nodes", fi.Size(), n)
	// An idle pass asks Placement for its versions only: neither the
	// fleet's size nor the cloud's shows in it.
	if requests, writes, bytes := pass(e, "idle pass"); requests > idleBudget || writes != 0 || bytes > 4096 {
		t.Fatalf("idle pass: %d requests, %d writes, %d bytes; want <= %d, 0, <= 4096", requests, writes, bytes, idleBudget)
	}
	// A restart restores the cache from the state file and checks it
	// with one list, instead of reading every node.
	restarted := newEnv(t, bc.URL, ds, opts)
	if requests, writes, _ := pass(restarted, "first pass after a restart"); requests > idleBudget || writes != 0 {
		t.Fatalf("first pass after a restart: %d requests, %d writes; want <= %d and 0", requests, writes, idleBudget)
	}
	if requests, writes, bytes := pass(restarted, "idle pass after a restart"); requests > idleBudget || writes != 0 || bytes > 4096 {
		t.Fatalf("idle pass after a restart: %d requests, %d writes, %d bytes", requests, writes, bytes)
	}
}

// BenchmarkIdlePass is one idle pass over 1,000 nodes against our
// server, with 2,000 other hosts' providers in it: time and allocations
// per pass, and requests and bytes answered per pass.
func BenchmarkIdlePass(b *testing.B) {
	const n = 1000
	srv := placementtest.StartOurs(b, placementtest.Options{})
	for i := range 2 * n {
		srv.MustDo(b, http.StatusOK, http.MethodPost, "/resource_providers", "1.20",
			map[string]string{"uuid": nodeUUID(42, i), "name": "other-" + strconv.Itoa(i)})
	}
	bc := newByteCounter(b, srv.URL)
	double := ironictest.NewIronicDouble(b, fleetNodes(n)...)
	d, err := ironic.New(b.Context(), ironic.Options{Endpoint: double.URL})
	if err != nil {
		b.Fatal(err)
	}
	pc, err := placementclient.New(b.Context(), placementclient.Options{Endpoint: bc.URL, Token: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Options{Placement: pc, Drivers: []drivers.Driver{d}, Host: "bench", RefreshInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.SyncOnce(b.Context()); err != nil {
		b.Fatal(err)
	}
	bc.reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := a.SyncOnce(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(bc.requests.Load())/float64(b.N), "requests/pass")
	b.ReportMetric(float64(bc.body.Load())/float64(b.N), "answer-bytes/pass")
}
