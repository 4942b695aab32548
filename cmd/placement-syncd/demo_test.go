package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/demo"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// demoConfigFor is configs/demo.yaml moved into dir: every listener on
// port 0, the files under dir instead of .demo/, JSON logs (so that the
// test can read the bound addresses). scripts/check-metrics makes the same
// substitutions.
func demoConfigFor(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../../configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{
		{"127.0.0.1:8778", "127.0.0.1:0"}, {"127.0.0.1:8779", "127.0.0.1:0"}, {"127.0.0.1:8780", "127.0.0.1:0"},
		{".demo/", dir + "/"}, {"format: console", "format: json"},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("configs/demo.yaml no longer has %q; update this test and scripts/check-metrics", r[0])
		}
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	path := filepath.Join(dir, "demo.yaml")
	writeFile(t, path, s)
	return path
}

// TestDemo runs the demo as scripts/run-demo does (demo init, serve,
// demo cycle; here in-process, with a 1 s period instead of 10 s) and
// watches the lifecycle through the API: a node's inventory flips to
// reserved = total and back, aggregates appear on the providers and go,
// the FPGA is reserved while it is programmed and comes back with its new
// function trait. Every wait polls with a deadline; the cycle repeats, so
// a missed window is caught on the next round.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	cfgPath := demoConfigFor(t, dir)
	demoInit(t, ctx, cfgPath)
	s := startAllInOne(t, cfgPath)

	cycle := syncd.Start(t, daemontest.Options{InProcess: true, NoWait: true, Args: []string{"demo", "cycle", "--config", cfgPath, "--period", "1s",
		"--agent", strings.TrimPrefix(s.agent.Base, "http://"), "--reconciler", strings.TrimPrefix(s.reconciler.Base, "http://")}})
	cycleLog := cycle.Log
	defer func() {
		if code := cycle.Stop(t); code != exitOK {
			t.Errorf("demo cycle: exit %d:\n%s", code, cycleLog)
		}
		if strings.Contains(cycleLog.String(), "demo step incomplete") {
			t.Errorf("a demo step failed:\n%s", cycleLog.String())
		}
		// Steps are numbered as docs/demo.md numbers them, 1 to 6 in
		// every round.
		steps := regexp.MustCompile(`demo step (\d+)/(\d+): `).FindAllStringSubmatch(cycleLog.String(), -1)
		for i, m := range steps {
			if want := fmt.Sprintf("%d/%d", i%len(demo.Steps())+1, len(demo.Steps())); m[1]+"/"+m[2] != want || len(demo.Steps()) != 6 {
				t.Errorf("the cycle's step %d logged as %q, want demo step %s of a 6-step scenario", i+1, m[0], want)
			}
		}
		if len(steps) < 4 {
			t.Errorf("the cycle logged %d steps, want at least 4:\n%s", len(steps), cycleLog.String())
		}
	}()

	node1 := demo.Nodes()[0].UUID
	device := fpga.ProviderUUID("demo-compute", demo.FPGADevice)
	reserved := func(rp, rc string) int {
		var body struct {
			Inventories map[string]struct{ Total, Reserved int }
		}
		s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+rp+"/inventories", nil).Decode(t, &body)
		inv, ok := body.Inventories[rc]
		if !ok {
			t.Fatalf("%s lost its %s inventory: %+v", rp, rc, body.Inventories)
		}
		return inv.Reserved
	}
	aggregates := func(rp string) []string {
		var body struct{ Aggregates []string }
		s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+rp+"/aggregates", nil).Decode(t, &body)
		return body.Aggregates
	}
	traits := func(rp string) []string {
		var body struct{ Traits []string }
		s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+rp+"/traits", nil).Decode(t, &body)
		return body.Traits
	}

	// The nodes exist (first pass) and are in rack-a (first run, or the
	// run step 1 asks for).
	daemontest.Eventually(t, ctx, "the agent created bm-gold-1", func() bool {
		var body struct {
			ResourceProviders []any `json:"resource_providers"`
		}
		s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers?uuid="+node1, nil).Decode(t, &body)
		return len(body.ResourceProviders) == 1
	})
	daemontest.Eventually(t, ctx, "bm-gold-1 is in rack-a", func() bool { return slices.Contains(aggregates(node1), demo.RackA) })
	daemontest.Eventually(t, ctx, "bm-gold-1 cleaning: reserved = total", func() bool { return reserved(node1, "CUSTOM_BAREMETAL_GOLD") == 1 })
	daemontest.Eventually(t, ctx, "demo-compute joins fpga-hosts", func() bool { return slices.Contains(aggregates(demo.ComputeUUID), demo.FPGAHostsUUID) })
	daemontest.Eventually(t, ctx, "the FPGA is reserved while it is programmed", func() bool { return reserved(device, "FPGA") == 2 })
	daemontest.Eventually(t, ctx, "the FPGA is released with function crypto-v2", func() bool {
		return reserved(device, "FPGA") == 0 && slices.Contains(traits(device), "CUSTOM_FPGA_FUNCTION_ID_INTEL_CRYPTO_V2")
	})
	daemontest.Eventually(t, ctx, "bm-gold-1 is available again: reserved back to 0", func() bool { return reserved(node1, "CUSTOM_BAREMETAL_GOLD") == 0 })
	daemontest.Eventually(t, ctx, "demo-compute leaves fpga-hosts", func() bool { return !slices.Contains(aggregates(demo.ComputeUUID), demo.FPGAHostsUUID) })

	m := s.API.Scrape(t, "/metrics")
	if v, _ := m.Value("placement_syncd_agent_fpga_programs_total", "result=success"); v < 1 {
		t.Errorf("%s, want >= 1", m.Describe("placement_syncd_agent_fpga_programs_total", "result=success"))
	}
	if v, _ := m.Value("placement_syncd_reconciler_changes_total", "job=aggregates"); v < 5 {
		t.Errorf("%s, want >= 5 (3 nodes into rack-a, demo-compute into fpga-hosts and out)", m.Describe("placement_syncd_reconciler_changes_total", "job=aggregates"))
	}
	for _, line := range []string{"inventory held back: reserved = total", "inventory released", "programming device"} {
		if !strings.Contains(s.Log.String(), line) {
			t.Errorf("serve did not log %q", line)
		}
	}
}

// TestDemo_Help: asking the demo for help prints its usage and exits 0,
// like every other command, instead of complaining about the subcommand.
func TestDemo_Help(t *testing.T) {
	for _, args := range [][]string{{"demo", "--help"}, {"demo", "-h"}, {"demo", "help"}, {"demo", "init", "-h"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
			t.Errorf("%v: exit %d, want %d; stderr: %s", args, code, exitOK, stderr.String())
		}
		if !strings.Contains(stderr.String(), "usage: placement-syncd demo init|cycle") || strings.Contains(stderr.String(), "expected subcommand") {
			t.Errorf("%v: stderr %q, want the demo's usage", args, stderr.String())
		}
	}
}

// TestDemo_GateFromHeartbeat checks what docs/demo.md says of the
// OWNER_NOVA gate: configs/demo.yaml vouches for demo-conductor only, so
// the gate opens from the agent's heartbeat for demo-compute (version
// 73, trusted because it carries reconciler.token), whose record in
// /v1/services bears the time it arrived; demo-conductor's configured
// record, never sent, has no time. A heartbeat at a lower version closes
// the gate until the agent's next one opens it again.
func TestDemo_GateFromHeartbeat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	dir := t.TempDir()
	cfgPath := demoConfigFor(t, dir)
	cfg, err := loadConfig(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	host, token := cfg.Agent.Host, cfg.Reconciler.Token
	if token == "" {
		t.Fatal("configs/demo.yaml: reconciler.token is empty, so no heartbeat is trusted")
	}
	for _, s := range cfg.Reconciler.Gate.Services {
		if s.Host == host {
			t.Fatalf("configs/demo.yaml: reconciler.gate.services vouches for %s: the gate would not wait for its heartbeat", host)
		}
	}
	demoInit(t, ctx, cfgPath)
	s := startAllInOne(t, cfgPath)

	type gateState struct {
		Open   bool
		Reason string
		Behind []string
	}
	gate := func() gateState {
		var g gateState
		s.reconciler.As(token).MustDo(t, http.StatusOK, http.MethodGet, "/v1/gate", nil).Decode(t, &g)
		return g
	}
	type record struct {
		Host, Binary  string
		Version       int
		Authenticated bool
		UpdatedAt     *time.Time `json:"updated_at"`
	}
	services := func() map[string]record {
		var body struct{ Services []record }
		s.reconciler.As(token).MustDo(t, http.StatusOK, http.MethodGet, "/v1/services", nil).Decode(t, &body)
		out := map[string]record{}
		for _, r := range body.Services {
			out[r.Host] = r
		}
		return out
	}
	fromAgentSince := func(r record, since time.Time) bool {
		return r.Authenticated && r.Version == 73 && r.UpdatedAt != nil && !r.UpdatedAt.Before(since) && !r.UpdatedAt.After(time.Now())
	}

	daemontest.Eventually(t, ctx, "the gate opens", func() bool { return gate().Open })
	recs := services()
	if r := recs[host]; !fromAgentSince(r, start.Add(-time.Second)) {
		t.Errorf("%s's record %+v, want the agent's heartbeat: version 73, trusted, updated since the test started", host, r)
	}
	if r, ok := recs[demo.Conductor]; !ok || !r.Authenticated || r.UpdatedAt != nil {
		t.Errorf("%s's record %+v (listed %v), want the configured one, trusted, without updated_at", demo.Conductor, r, ok)
	}

	// The same host reporting version 72 closes the gate at once, unless
	// the agent's own heartbeat came in between.
	sent := time.Now()
	s.reconciler.As(token).MustDo(t, http.StatusNoContent, http.MethodPost, "/v1/services", map[string]any{"host": host, "binary": "nova-compute", "version": 72})
	if g := gate(); g.Open || !slices.Equal(g.Behind, []string{host}) {
		if r := services()[host]; !fromAgentSince(r, sent) {
			t.Errorf("after a heartbeat at version 72: gate %+v and %s's record %+v, want the gate closed with %s behind", g, host, r, host)
		}
	}
	// agent.heartbeat_interval is 10 s.
	daemontest.Eventually(t, ctx, "the agent's next heartbeat opens the gate again", func() bool {
		return gate().Open && fromAgentSince(services()[host], sent)
	})
}
