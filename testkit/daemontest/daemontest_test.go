package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// double is the command the harness's tests start: the double of serve
// in testdata, and an in-process entry point that runs a test server.
var double = Main{Package: "./testdata/daemondouble", Run: runInProcess}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := double.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// runInProcess writes the start-up line for an in-process server and
// serves until ctx ends; args[0] "fail" exits 3 at once.
func runInProcess(ctx context.Context, args []string, _, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "fail" {
		fmt.Fprintln(stderr, `{"msg":"config error"}`)
		return 3
	}
	srv := newInProcessServer()
	fmt.Fprintf(stderr, "{\"msg\":%q,\"listen\":%q,\"n\":1}\n", Started, strings.TrimPrefix(srv.URL, "http://"))
	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(stderr, `{"msg":"placement-syncd stopped"}`)
	return 0
}

func TestBinary_RequestsMetricsAndStop(t *testing.T) {
	d := double.Start(t, Options{Dir: t.TempDir()})
	if !strings.HasPrefix(d.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q", d.URL)
	}
	var echo map[string]string
	d.API.MustDo(t, http.StatusTeapot, http.MethodPost, "/x", map[string]int{"a": 1}).Decode(t, &echo)
	if echo["token"] != "admin" || !strings.HasPrefix(echo["version"], "placement 1.") || echo["type"] != "application/json" {
		t.Errorf("request headers as the daemon saw them: %v", echo)
	}
	d.API.As("").At("").MustDo(t, http.StatusTeapot, http.MethodGet, d.URL+"/y", nil).Decode(t, &echo)
	if echo["token"] != "" || echo["version"] != "" || echo["type"] != "" {
		t.Errorf("a request without token, microversion and body carried %v", echo)
	}
	m := d.API.WaitMetric(t, t.Context(), "/metrics", "two requests counted", func(m metricstest.Scrape) bool {
		return m.Is(2, "double_requests_total")
	})
	if !m.Is(2, "double_requests_total") {
		t.Errorf("scrape: %s", m.Describe("double_requests_total"))
	}
	if code := d.Stop(t); code != 0 || !strings.Contains(d.Log.String(), "placement-syncd stopped") {
		t.Errorf("after SIGTERM: exit %d, log:\n%s", code, d.Log)
	}
	if r, err := d.API.Do(t.Context(), http.MethodGet, "/", nil); err == nil || r.Code != 0 {
		t.Errorf("a stopped daemon answered: %d %v", r.Code, err)
	}
}

func TestBinary_KillPauseRestart(t *testing.T) {
	rs := double.StartReplicas(t, 2, func(int) Options { return Options{} })
	a := rs.Get(0)
	from, to := rs.Pause(t, 0, 300*time.Millisecond)
	if to.Sub(from) < 300*time.Millisecond {
		t.Errorf("paused %s", to.Sub(from))
	}
	a.API.MustDo(t, http.StatusTeapot, http.MethodGet, "/", nil) // continued
	// A request to a stopped process is answered once it continues.
	answered := make(chan int)
	go func() {
		time.Sleep(100 * time.Millisecond)
		r, _ := rs.Get(1).API.Do(context.Background(), http.MethodGet, "/", nil)
		answered <- r.Code
	}()
	rs.Pause(t, 1, 400*time.Millisecond)
	if code := <-answered; code != http.StatusTeapot {
		t.Errorf("the request sent during the pause: %d", code)
	}
	rs.Kill(t, 0)
	if !a.Exited() {
		t.Fatal("killed, still running")
	}
	if r, err := a.API.Do(t.Context(), http.MethodGet, "/", nil); err == nil {
		t.Errorf("a killed daemon answered %d", r.Code)
	}
	b := rs.Restart(t, 0)
	if b == a || rs.Get(0) != b || b.Exited() {
		t.Fatal("restart did not replace the replica with a running one")
	}
	b.API.MustDo(t, http.StatusTeapot, http.MethodGet, "/", nil)
	if !strings.Contains(rs.Tails(), "replica 1:") {
		t.Errorf("tails:\n%s", rs.Tails())
	}
}

func TestInProcess(t *testing.T) {
	d := double.Start(t, Options{InProcess: true})
	d.API.MustDo(t, http.StatusTeapot, http.MethodGet, "/", nil)
	if got := d.Log.Field(t, Started, "listen"); "http://"+got != d.URL {
		t.Errorf("listen %q, URL %q", got, d.URL)
	}
	line := d.Log.Wait(t, t.Context(), Started, map[string]string{"n": "1"})
	if line["listen"] == nil {
		t.Errorf("line %v", line)
	}
	if code := d.Stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	if _, ok := d.Log.Find("placement-syncd stopped", nil); !ok {
		t.Errorf("no stop line:\n%s", d.Log)
	}
}

// A daemon that exits before its ready line fails the start at once,
// with its log, instead of waiting out the deadline.
func TestInProcess_ExitBeforeReady(t *testing.T) {
	d := &Daemon{Log: &Log{}, m: &double, opts: Options{InProcess: true, Args: []string{"fail"}}, done: make(chan struct{})}
	d.startInProcess(t)
	start := time.Now()
	_, err := d.Log.wait(t.Context(), d.done, Started, nil)
	if err != errExited || time.Since(start) > 10*time.Second || d.code != 3 {
		t.Errorf("wait: %v after %s, exit %d", err, time.Since(start), d.code)
	}
}

func TestLog_WaitAcrossWrites(t *testing.T) {
	var l Log
	go func() {
		for i := range 5 {
			time.Sleep(10 * time.Millisecond)
			fmt.Fprintf(&l, "not json %d\n{\"msg\":\"step\",\"i\":%d,\"s\":\"x%d\"}\n", i, i, i)
		}
		// A line written in two pieces.
		l.Write([]byte(`{"msg":"la`))
		l.Write([]byte("st\"}\n"))
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if m := l.Wait(t, ctx, "step", map[string]string{"s": "x3", "i": "3"}); m["i"] != float64(3) {
		t.Errorf("line %v", m)
	}
	l.Wait(t, ctx, "last", nil)
	if _, ok := l.Find("step", map[string]string{"s": "x9"}); ok {
		t.Error("found a line never written")
	}
	if tail := l.Tail(8); !strings.HasPrefix(tail, "…") || len(tail) != len("…")+8 {
		t.Errorf("tail %q", tail)
	}
}

func TestEventually(t *testing.T) {
	n := 0
	Soon(t, "three tries", func() bool { n++; return n == 3 })
	var errs bytes.Buffer
	Eventually(t, t.Context(), "no error", func() error {
		if errs.Len() < 2 {
			errs.WriteByte('x')
			return fmt.Errorf("not yet (%d)", errs.Len())
		}
		return nil
	})
	if n != 3 || errs.Len() != 2 {
		t.Errorf("asked %d and %d times", n, errs.Len())
	}
}

// newInProcessServer answers as the double of testdata does, without
// /metrics.
func newInProcessServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_ = json.NewEncoder(w).Encode(map[string]string{"token": r.Header.Get("X-Auth-Token")})
	}))
}
