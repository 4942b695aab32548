package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2E_GateSet: with the reconciler not running, `gate set` records
// the override in the state file, flags given after the words too, and
// `gate show` reports it with its time; a bad value is a usage error.
func TestE2E_GateSet(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t)
	novaPath := e.writeNova(t, nil, novaHost{"c1", "c0c0c0c0-0000-4000-8000-000000000001"})
	cfg := e.config(t, "gate.yaml", "listen: "+freeAddr(t), "nova:", "  file: "+novaPath)

	wantOutput(t, syncd.Exec(t, e.dir, "gate", "show", "--config", cfg), exitOK,
		[]string{"OWNER_NOVA gate: closed", "reason: 1 of 1 nova-compute services have no known version", "no known version: c1"}, nil)
	wantOutput(t, syncd.Exec(t, e.dir, "gate", "set", "open", "--config", cfg), exitOK,
		[]string{"OWNER_NOVA gate: open", "override: open", "override set: ", "source: state file"}, nil)
	state, err := os.ReadFile(filepath.Join(e.dir, "state.json"))
	if err != nil || !strings.Contains(string(state), `"override": "open"`) {
		t.Fatalf("state file after gate set: %v\n%s", err, state)
	}
	wantOutput(t, syncd.Exec(t, e.dir, "gate", "--config", cfg), exitOK, []string{"OWNER_NOVA gate: open", "override: open"}, nil)
	wantOutput(t, syncd.Exec(t, e.dir, "gate", "set", "auto", "--config", cfg), exitOK, []string{"OWNER_NOVA gate: closed", "override: auto"}, nil)
	wantOutput(t, syncd.Exec(t, e.dir, "gate", "set", "ajar", "--config", cfg), exitUsage, nil, []string{`"ajar" is not open, closed or auto`})
	// jobs takes its flags after the words too (the reconciler is not
	// running here, so the call fails, but on the configured address).
	wantOutput(t, syncd.Exec(t, e.dir, "jobs", "list", "--config", cfg), exitFailure, nil, []string{"reconciler endpoint"})
}
