package config

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
	if cfg.Agent.RefreshInterval != time.Hour || cfg.Agent.Refresh() != time.Hour {
		t.Fatalf("default refresh_interval %s", cfg.Agent.RefreshInterval)
	}
	if cfg, err = load("agent:\n  refresh_interval: 0s\n"); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Agent.Refresh(); got >= 0 {
		t.Fatalf("refresh_interval 0 maps to %s, want a negative (off) option", got)
	}
	_, err = load("agent:\n  refresh_interval: -5m\n")
	if err == nil || !strings.Contains(err.Error(), "agent.refresh_interval: must not be negative") {
		t.Fatalf("negative refresh_interval: %v", err)
	}
}

// TestAgentMaxRetirements: agent.max_retirements defaults to 10%, takes
// a count or a percentage, and anything else is refused naming the key.
func TestAgentMaxRetirements(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (Config, error) {
		path := filepath.Join(dir, "agent.yaml")
		writeFile(t, path, body)
		return loadConfig(path, nil)
	}
	cfg, err := load("agent:\n  state_file: /tmp/x.json\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Agent.MaxRetirements != "10%" || cfg.Agent.StateFile != "/tmp/x.json" {
		t.Fatalf("max_retirements %q state_file %q, want 10%% and /tmp/x.json", cfg.Agent.MaxRetirements, cfg.Agent.StateFile)
	}
	if _, err := load("agent:\n  max_retirements: \"5\"\n"); err != nil {
		t.Fatalf("max_retirements 5: %v", err)
	}
	_, err = load("agent:\n  max_retirements: lots\n")
	if err == nil || !strings.Contains(err.Error(), "agent.max_retirements") {
		t.Fatalf("max_retirements lots: %v", err)
	}
}
