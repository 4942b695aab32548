package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAgentOnce runs `agent --once` with the static driver against a real
// server, then again with Placement unreachable (exit 1).
func TestAgentOnce(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	dir := t.TempDir()
	providers := filepath.Join(dir, "providers.yaml")
	if err := os.WriteFile(providers, []byte(`providers:
  - uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01
    name: compute-1
    owner: OWNER_NOVA
    inventories:
      VCPU: {total: 16, allocation_ratio: 4.0}
      MEMORY_MB: {total: 4096, unavailable: maintenance}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(endpoint string) string {
		cfg := filepath.Join(dir, "agent.yaml")
		body := "log: {format: console}\nagent:\n  host: h1\n  placement: {endpoint: \"" + endpoint + "\", token: admin}\n  static: {enabled: true, file: \"" + providers + "\"}\n"
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", write(srv.URL), "--once"}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	_, invs := srv.Inventories(t, "7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01")
	if invs["MEMORY_MB"]["reserved"] != 4096 || invs["VCPU"]["allocation_ratio"] != 4 {
		t.Fatalf("inventories %v", invs)
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"agent", "--config", write("http://127.0.0.1:1"), "--once"}, &bytes.Buffer{}, &stderr); code != exitFailure {
		t.Fatalf("unreachable placement: exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(stderr.String(), "placement unavailable") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

func TestAgent_NoDriver(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(cfg, []byte("agent: {host: h}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", cfg, "--once"}, &bytes.Buffer{}, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no driver enabled") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

func TestFPGAProgram_NoAgent(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(cfg, []byte("agent: {local: {listen: \"127.0.0.1:1\", token: t}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"fpga", "program", "--config", cfg, "--device", "0000:5e:00.0", "--image", "x"}, &bytes.Buffer{}, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "local endpoint") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
