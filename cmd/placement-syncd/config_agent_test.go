package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentRefreshInterval: agent.refresh_interval defaults to the
// agent's default, 0 in the file turns the periodic re-read off (a
// negative agent option) and a negative value is refused.
func TestAgentRefreshInterval(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (Config, error) {
		path := filepath.Join(dir, "agent.yaml")
		writeFile(t, path, body)
		return loadConfig(path, nil)
	}
	cfg, err := load("agent:\n  interval: 10s\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Agent.RefreshInterval != time.Hour || agentRefresh(cfg.Agent.RefreshInterval) != time.Hour {
		t.Fatalf("default refresh_interval %s", cfg.Agent.RefreshInterval)
	}
	if cfg, err = load("agent:\n  refresh_interval: 0s\n"); err != nil {
		t.Fatal(err)
	}
	if got := agentRefresh(cfg.Agent.RefreshInterval); got >= 0 {
		t.Fatalf("refresh_interval 0 maps to %s, want a negative (off) option", got)
	}
	_, err = load("agent:\n  refresh_interval: -5m\n")
	if err == nil || !strings.Contains(err.Error(), "agent.refresh_interval: must not be negative") {
		t.Fatalf("negative refresh_interval: %v", err)
	}
}
