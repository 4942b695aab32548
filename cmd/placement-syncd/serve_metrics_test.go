package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

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
			d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", cfgPath}})
			metrics := d.Log.Field(t, daemontest.Started, "metrics")
			scraper := d.API.As("").At("")
			if r, err := scraper.Do(t.Context(), http.MethodGet, "/metrics", nil); err != nil || (r.Code == http.StatusOK) != tt.onAPI {
				t.Errorf("GET /metrics on the API listener: %d %v", r.Code, err)
			}
			switch {
			case tt.onAPI && metrics != d.URL+"/metrics",
				tt.separate && (!strings.HasPrefix(metrics, "http://127.0.0.1:") || strings.Contains(metrics, d.URL)),
				!tt.onAPI && !tt.separate && metrics != "disabled":
				t.Fatalf("start-up line says metrics at %q (API at %s)", metrics, d.URL)
			}
			if metrics == "disabled" {
				return
			}
			body := scraper.MustDo(t, http.StatusOK, http.MethodGet, metrics, nil).Body
			for _, want := range append(tt.want, "placement_syncd_build_info{", "placement_syncd_http_requests_in_flight", "placement_syncd_store_transaction_duration_seconds", "openstack_placement_up 1", "go_goroutines", "process_start_time_seconds") {
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("scrape lacks %s", want)
				}
			}
			metricstest.Parse(t, body)
		})
	}
}
