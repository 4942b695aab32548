package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/demo"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAgent_Metrics runs `placement-syncd agent` (an agent-only host: no
// API listener) and scrapes the /metrics listener it opens for itself.
func TestAgent_Metrics(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := demo.Files{Static: filepath.Join(dir, "compute.yaml"), Ironic: filepath.Join(dir, "nodes.json"),
		FPGA: filepath.Join(dir, "fpga.json"), Nova: filepath.Join(dir, "nova.json"), Host: "cn-1"}
	if err := files.WriteInit(); err != nil {
		t.Fatal(err)
	}
	if err := files.Write(demo.Step{Nodes: [3]demo.NodeState{demo.Cleaning, demo.Maintenance, demo.Available}}); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "agent.yaml")
	writeFile(t, cfgPath, fmt.Sprintf(`metrics: {listen: "127.0.0.1:0"}
agent:
  host: cn-1
  placement: {endpoint: %q, token: admin}
  static: {enabled: true, file: %q}
  ironic: {enabled: true, file: %q}
`, srv.URL, files.Static, files.Ironic))

	d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"agent", "--config", cfgPath}, Ready: "agent started"})
	metrics := d.Client(d.Log.Field(t, "agent started", "metrics"), "")
	m := metrics.WaitMetric(t, ctx, "", "the first pass is in the metrics", func(m metricstest.Scrape) bool {
		v, _ := m.Value("placement_syncd_agent_syncs_total", "driver=ironic", "result=success")
		return v >= 1
	})
	for _, c := range []struct {
		want   float64
		name   string
		labels []string
	}{
		{1, "placement_syncd_agent_unavailable_resources", []string{"driver=ironic", "reason=cleaning"}},
		{1, "placement_syncd_agent_unavailable_resources", []string{"driver=ironic", "reason=maintenance"}},
		{1, "placement_syncd_agent_placement_up", nil},
	} {
		if !m.Is(c.want, c.name, c.labels...) {
			t.Errorf("%s, want %g", m.Describe(c.name, c.labels...), c.want)
		}
	}
	if _, ok := m.Families["placement_syncd_build_info"]; !ok {
		t.Error("build_info missing: the agent does not use the process registry")
	}
	if _, ok := m.Families["placement_syncd_http_requests_total"]; ok {
		t.Error("API metrics on an agent-only host")
	}
}
