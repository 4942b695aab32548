package main

import (
	"context"
	"fmt"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/demo"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// TestAllInOne_ScenarioMetrics runs one `serve` with the API, the
// reconciler (Nova file source) and the agent (static compute node and
// Ironic file source), scripts a scenario through the sources and the
// API — claims, a node cleaning and back, an aggregate sync — and checks
// the values scraped from /metrics over HTTP after each step.
func TestAllInOne_ScenarioMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := demo.Files{
		Static: filepath.Join(dir, "compute.yaml"), Ironic: filepath.Join(dir, "nodes.json"),
		FPGA: filepath.Join(dir, "fpga.json"), Nova: filepath.Join(dir, "nova.json"), Host: "cn-1",
	}
	if err := files.WriteInit(); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "c.yaml")
	// Hour-long intervals: passes and runs happen at start and when the
	// test asks for them, so every count below is exact.
	writeFile(t, cfgPath, fmt.Sprintf(`api: {listen: "127.0.0.1:0", shutdown_grace: 2s}
database: {path: %q}
reconciler:
  enabled: true
  listen: "127.0.0.1:0"
  state_file: %q
  jobs: {aggregates: "@every 1h", owner_traits: "@every 1h"}
  nova: {file: %q}
  # Nova lists cn-1 and the conductor; the operator vouches for their
  # versions (no token here, so heartbeats give none).
  gate: {services: [{host: cn-1, binary: nova-compute, version: 73}, {host: demo-conductor, binary: nova-compute, version: 73}]}
agent:
  host: cn-1
  nova_compute_version: 73
  interval: 1h
  heartbeat_interval: 1h
  local: {listen: "127.0.0.1:0", token: local-secret}
  static: {enabled: true, file: %q}
  ironic: {enabled: true, file: %q}
`, filepath.Join(dir, "p.db"), filepath.Join(dir, "state.json"), files.Nova, files.Static, files.Ironic))
	s := startAllInOne(t, cfgPath)
	scrape := func() metricstest.Scrape { return s.API.Scrape(t, "/metrics") }
	node1, node2, node3 := demo.Nodes()[0].UUID, demo.Nodes()[1].UUID, demo.Nodes()[2].UUID
	gold, silver := "resource_class=CUSTOM_BAREMETAL_GOLD", "resource_class=CUSTOM_BAREMETAL_SILVER"

	// The agent's first pass (at start) creates the compute node and
	// the three nodes, all available.
	daemontest.Eventually(t, ctx, "the agent's first pass succeeded", func() bool {
		m := scrape()
		v, ok := m.Value("placement_syncd_agent_last_success_timestamp_seconds", "driver=ironic")
		return ok && v > 0 && m.Is(4, "placement_syncd_resource_providers")
	})

	// Its service record reached the reconciler, which opened the gate.
	var services struct {
		Services []struct {
			Host, Binary string
			Version      int
		}
	}
	s.reconciler.MustDo(t, http.StatusOK, http.MethodGet, "/v1/services", nil).Decode(t, &services)
	// The configured records (both hosts) come first, then heartbeats of
	// other hosts; cn-1's is replaced by its configured record.
	if len(services.Services) != 2 || services.Services[0].Host != "cn-1" || services.Services[0].Binary != "nova-compute" || services.Services[0].Version != 73 {
		t.Errorf("reconciler's services: %+v", services.Services)
	}

	// Claims: an instance on the compute node, another on bm-gold-2.
	claim := func(consumer, rp string, resources map[string]int) {
		s.API.MustDo(t, http.StatusNoContent, http.MethodPut, "/allocations/"+consumer, map[string]any{
			"allocations": map[string]any{rp: map[string]any{"resources": resources}},
			"project_id":  "p1", "user_id": "u1", "consumer_generation": nil, "consumer_type": "INSTANCE",
		})
	}
	claim("c0000000-0000-4000-8000-000000000001", demo.ComputeUUID, map[string]int{"VCPU": 4, "MEMORY_MB": 2048})
	claim("c0000000-0000-4000-8000-000000000002", node2, map[string]int{"CUSTOM_BAREMETAL_GOLD": 1})

	// Ironic: bm-gold-1 starts cleaning, bm-silver-1 goes into maintenance.
	if err := files.Write(demo.Step{Nodes: [3]demo.NodeState{demo.Cleaning, demo.Available, demo.Maintenance}}); err != nil {
		t.Fatal(err)
	}
	s.agent.As("local-secret").MustDo(t, http.StatusAccepted, http.MethodPost, "/v1/resync", nil)
	daemontest.Eventually(t, ctx, "the agent reported the cleaning and the maintenance", func() bool {
		m := scrape()
		return m.Is(1, "placement_syncd_agent_unavailable_resources", "driver=ironic", "reason=cleaning") &&
			m.Is(1, "placement_syncd_agent_unavailable_resources", "driver=ironic", "reason=maintenance")
	})

	// Nova: rack-a (demo-conductor: the three nodes) is mirrored.
	var rec struct{ Result string }
	runStart := float64(time.Now().UnixNano()) / 1e9
	s.reconciler.MustDo(t, http.StatusOK, http.MethodPost, "/v1/jobs/aggregates/run", nil).Decode(t, &rec)
	if rec.Result != "ok" {
		t.Fatalf("aggregates run: %+v", rec)
	}
	// Nova adds cn-1 to fpga-hosts.
	if err := files.Write(demo.Step{Nodes: [3]demo.NodeState{demo.Cleaning, demo.Available, demo.Maintenance}, FPGAHosts: true}); err != nil {
		t.Fatal(err)
	}
	s.reconciler.MustDo(t, http.StatusOK, http.MethodPost, "/v1/jobs/aggregates/run", nil).Decode(t, &rec)

	m := scrape()
	checks := []struct {
		want   float64
		name   string
		labels []string
	}{
		{1, "placement_syncd_agent_unavailable_resources", []string{"driver=ironic", "reason=cleaning"}},
		{1, "placement_syncd_agent_unavailable_resources", []string{"driver=ironic", "reason=maintenance"}},
		{0, "placement_syncd_agent_unavailable_resources", []string{"driver=ironic", "reason=power"}},
		{0, "placement_syncd_agent_unavailable_resources", []string{"driver=static", "reason=cleaning"}},
		{1, "placement_syncd_agent_placement_up", nil},
		// The three nodes into rack-a, then cn-1 into fpga-hosts, over
		// however many runs; the last run found one difference.
		{4, "placement_syncd_reconciler_changes_total", []string{"job=aggregates"}},
		{1, "placement_syncd_reconciler_drift", []string{"job=aggregates"}},
		{0, "placement_syncd_reconciler_hosts_without_provider", []string{"job=aggregates"}},
		{1, "placement_syncd_reconciler_owner_nova_gate_open", nil},
		{2, "placement_syncd_aggregates", nil},
		// Used and reserved per class, summed over providers.
		{4, "placement_syncd_resource_class_used", []string{"resource_class=VCPU"}},
		{2048, "placement_syncd_resource_class_used", []string{"resource_class=MEMORY_MB"}},
		{1, "placement_syncd_resource_class_used", []string{gold}},
		{0, "placement_syncd_resource_class_used", []string{silver}},
		{1, "placement_syncd_resource_class_reserved", []string{gold}},
		{1, "placement_syncd_resource_class_reserved", []string{silver}},
		{512, "placement_syncd_resource_class_reserved", []string{"resource_class=MEMORY_MB"}},
		// openstack-exporter's family, per node.
		{1, "openstack_placement_resource_reserved", []string{"hostname=" + node1, "resourcetype=CUSTOM_BAREMETAL_GOLD"}},
		{0, "openstack_placement_resource_reserved", []string{"hostname=" + node2, "resourcetype=CUSTOM_BAREMETAL_GOLD"}},
		{1, "openstack_placement_resource_usage", []string{"hostname=" + node2, "resourcetype=CUSTOM_BAREMETAL_GOLD"}},
		{1, "openstack_placement_resource_reserved", []string{"hostname=" + node3, "resourcetype=CUSTOM_BAREMETAL_SILVER"}},
		{1, "openstack_placement_resource_total", []string{"hostname=" + node1, "resourcetype=CUSTOM_BAREMETAL_GOLD"}},
	}
	for _, c := range checks {
		if !m.Is(c.want, c.name, c.labels...) {
			t.Errorf("%s, want %g", m.Describe(c.name, c.labels...), c.want)
		}
	}
	if v, _ := m.Value("placement_syncd_reconciler_last_success_timestamp_seconds", "job=aggregates"); v < runStart || v > float64(time.Now().UnixNano())/1e9 {
		t.Errorf("last success %f, want in [%f, now]", v, runStart)
	}
	if v, _ := m.Value("placement_syncd_reconciler_runs_total", "job=aggregates", "result=ok"); v != 3 {
		t.Errorf("aggregates runs ok = %g, want 3 (start and two on demand)", v)
	}

	// Cleaning is over: the reservation goes, the inventory stays.
	if err := files.Write(demo.Step{Nodes: [3]demo.NodeState{demo.Available, demo.Available, demo.Maintenance}, FPGAHosts: true}); err != nil {
		t.Fatal(err)
	}
	s.agent.As("local-secret").MustDo(t, http.StatusAccepted, http.MethodPost, "/v1/resync", nil)
	daemontest.Eventually(t, ctx, "bm-gold-1 is released", func() bool {
		m := scrape()
		return m.Is(0, "placement_syncd_agent_unavailable_resources", "driver=ironic", "reason=cleaning") &&
			m.Is(0, "openstack_placement_resource_reserved", "hostname="+node1, "resourcetype=CUSTOM_BAREMETAL_GOLD") &&
			m.Is(1, "openstack_placement_resource_total", "hostname="+node1, "resourcetype=CUSTOM_BAREMETAL_GOLD") &&
			m.Is(0, "placement_syncd_resource_class_reserved", gold)
	})
}
