package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// startedLine is the start-up log line's fields about listeners.
type startedLine struct {
	Listen  string `json:"listen"`
	Metrics string `json:"metrics"`
}

func parseStarted(t *testing.T, log string) startedLine {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		var e struct {
			Msg string `json:"msg"`
			startedLine
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "placement-syncd started" {
			return e.startedLine
		}
	}
	t.Fatalf("no start-up line in:\n%s", log)
	return startedLine{}
}

func httpGet(t *testing.T, ctx context.Context, url string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestRun_Metrics runs serve with each metrics placement and scrapes
// where the start-up line says /metrics is.
func TestRun_Metrics(t *testing.T) {
	tests := []struct {
		name     string
		section  string
		onAPI    bool // /metrics answers on the API listener
		separate bool // a listener of its own
		want     []string
	}{
		{name: "default: on the API listener", section: "", onAPI: true},
		{name: "own listener", section: "metrics:\n  listen: \"127.0.0.1:0\"\n", separate: true},
		{name: "disabled", section: "metrics:\n  enabled: false\n"},
		{name: "with the reconciler", section: "reconciler:\n  enabled: true\n  listen: \"127.0.0.1:0\"\n  state_file: STATE\n", onAPI: true, want: []string{"placement_syncd_reconciler_owner_nova_gate_open"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "c.yaml")
			section := strings.ReplaceAll(tt.section, "STATE", filepath.Join(dir, "state.json"))
			writeFile(t, cfgPath, "api:\n  listen: \"127.0.0.1:0\"\n  shutdown_grace: 2s\ndatabase:\n  path: "+filepath.Join(dir, "p.db")+"\n"+section)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runCtx, stop := context.WithCancel(ctx)
			lw := newLogWatcher()
			done := make(chan int, 1)
			go func() { done <- run(runCtx, []string{"serve", "--config", cfgPath}, &bytes.Buffer{}, lw) }()
			defer func() {
				stop()
				if code := <-done; code != exitOK {
					t.Errorf("exit code %d; log:\n%s", code, lw.String())
				}
				http.DefaultClient.CloseIdleConnections()
			}()
			addr := lw.listenAddr(t, ctx)
			started := parseStarted(t, lw.String())

			code, _ := httpGet(t, ctx, "http://"+addr+"/metrics")
			if (code == http.StatusOK) != tt.onAPI {
				t.Errorf("GET /metrics on the API listener: %d", code)
			}
			switch {
			case tt.onAPI && started.Metrics != "http://"+addr+"/metrics",
				tt.separate && (!strings.HasPrefix(started.Metrics, "http://127.0.0.1:") || strings.Contains(started.Metrics, addr)),
				!tt.onAPI && !tt.separate && started.Metrics != "disabled":
				t.Fatalf("start-up line says metrics at %q (API at %s)", started.Metrics, addr)
			}
			if started.Metrics == "disabled" {
				return
			}
			code, body := httpGet(t, ctx, started.Metrics)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", started.Metrics, code)
			}
			for _, want := range append(tt.want, "placement_syncd_build_info{", "placement_syncd_http_requests_in_flight", "placement_syncd_store_transaction_duration_seconds", "openstack_placement_up 1", "go_goroutines", "process_start_time_seconds") {
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("scrape lacks %s", want)
				}
			}
			metricstest.Parse(t, body)
		})
	}
}
