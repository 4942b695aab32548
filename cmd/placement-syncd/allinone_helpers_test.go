package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// allInOne is a `serve` run in-process with the agent and the reconciler.
type allInOne struct {
	api, agent, reconciler string // base URLs
	log                    *logWatcher
}

// startAllInOne runs serve with the config at cfgPath (every listener on
// port 0, JSON logs) until the test ends, and reads the bound addresses
// from the start-up log lines.
func startAllInOne(t *testing.T, ctx context.Context, cfgPath string) *allInOne {
	t.Helper()
	lw := runServe(t, ctx, cfgPath)
	s := &allInOne{api: "http://" + lw.listenAddr(t, ctx), log: lw}
	s.agent = "http://" + logField(t, lw.String(), "agent local endpoint", "listen")
	s.reconciler = "http://" + logField(t, lw.String(), "reconciler endpoint", "listen")
	return s
}

// runServe runs serve with the config at cfgPath until the test ends
// (exit 0 expected) and returns its log.
func runServe(t *testing.T, ctx context.Context, cfgPath string) *logWatcher {
	t.Helper()
	runCtx, stop := context.WithCancel(ctx)
	lw := newLogWatcher()
	done := make(chan int, 1)
	go func() { done <- run(runCtx, []string{"serve", "--config", cfgPath}, &bytes.Buffer{}, lw) }()
	t.Cleanup(func() {
		stop()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit code %d; log:\n%s", code, lw.String())
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return lw
}

// demoInit runs `demo init` with the config at cfgPath.
func demoInit(t *testing.T, ctx context.Context, cfgPath string) {
	t.Helper()
	var stderr bytes.Buffer
	if code := run(ctx, []string{"demo", "init", "--config", cfgPath}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("demo init: exit %d: %s", code, stderr.String())
	}
}

// logField returns field of the first JSON log line with message msg.
func logField(t *testing.T, log, msg, field string) string {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == msg {
			if v, ok := e[field].(string); ok {
				return v
			}
		}
	}
	t.Fatalf("no %q line with %s in:\n%s", msg, field, log)
	return ""
}

// do sends a request with X-Auth-Token and the latest microversion and
// decodes a JSON answer into out (when not nil); it fails the test on a
// status other than want.
func do(t *testing.T, ctx context.Context, method, url, token string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
}

// eventually polls cond every 50 ms until it holds or ctx ends, then
// fails the test with what.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scrapeMetrics fetches url without a token, as Prometheus does, lints it
// as promtool would and parses it.
func scrapeMetrics(t *testing.T, ctx context.Context, url string) metricstest.Scrape {
	t.Helper()
	code, raw := httpGet(t, ctx, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d: %s", url, code, raw)
	}
	return metricstest.Parse(t, raw)
}
