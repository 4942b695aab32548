package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
	s := &allInOne{api: "http://" + lw.listenAddr(t, ctx), log: lw}
	s.agent = "http://" + logField(t, lw.String(), "agent local endpoint", "listen")
	s.reconciler = "http://" + logField(t, lw.String(), "reconciler endpoint", "listen")
	return s
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

// metricsScrape is one parsed GET /metrics.
type metricsScrape struct {
	raw      []byte
	families map[string]*dto.MetricFamily
}

// scrapeMetrics fetches url without a token, as Prometheus does, lints it
// as promtool would and parses it.
func scrapeMetrics(t *testing.T, ctx context.Context, url string) metricsScrape {
	t.Helper()
	code, raw := httpGet(t, ctx, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d: %s", url, code, raw)
	}
	problems, err := promlint.New(bytes.NewReader(raw)).Lint()
	if err != nil {
		t.Fatalf("lint %s: %v", url, err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return metricsScrape{raw: raw, families: fams}
}

// value is the sample of name whose labels are exactly labels ("k=v");
// ok is false without such a series.
func (s metricsScrape) value(name string, labels ...string) (float64, bool) {
	for _, m := range s.families[name].GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(labels))
		if !slices.Equal(got, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// is reports whether the series exists with value v.
func (s metricsScrape) is(v float64, name string, labels ...string) bool {
	got, ok := s.value(name, labels...)
	return ok && got == v
}

func (s metricsScrape) describe(name string, labels ...string) string {
	v, ok := s.value(name, labels...)
	if !ok {
		return fmt.Sprintf("%s%v missing", name, labels)
	}
	return fmt.Sprintf("%s%v = %g", name, labels, v)
}
