package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// retireNode is the uuid of the i-th node of the retirement tests.
func retireNode(i int) string { return fmt.Sprintf("2f1e0d3c-0000-4000-8000-%012x", i) }

// passWrites returns the "writes" of each "sync pass" log line in a JSON
// log.
func passWrites(t *testing.T, log string) []int {
	t.Helper()
	var out []int
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct {
			Msg    string `json:"msg"`
			Writes int    `json:"writes"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "sync pass" {
			out = append(out, line.Writes)
		}
	}
	return out
}

// TestAgentDryRunRetirements: with Ironic nodes deleted, `agent --once
// --dry-run` plans each retirement (a delete, or a reservation in full
// for a provider with allocations) and counts it; the real pass makes
// exactly those writes and its "sync pass" log line counts them. When
// max_retirements refuses, the dry run says so and plans the vanished
// providers' reservation, which the real pass then makes.
func TestAgentDryRunRetirements(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	proxy := placementtest.NewProxy(t, srv.URL)
	var nodes []ironictest.Node
	for i := range 30 {
		nodes = append(nodes, ironictest.Node{UUID: retireNode(i), ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"})
	}
	double := ironictest.NewIronicDouble(t, nodes...)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	writeFile(t, cfg, "log: {format: json}\nagent:\n  host: h1\n  placement: {endpoint: \""+proxy.URL+"\", token: admin}\n"+
		"  state_file: \""+filepath.Join(dir, "state.json")+"\"\n  ironic: {enabled: true, endpoint: \""+double.URL+"\"}\n")
	agentRun := func(args ...string) (stdout, stderr string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(t.Context(), append([]string{"agent", "--config", cfg, "--once"}, args...), &out, &errb); code != exitOK {
			t.Fatalf("agent --once %v: exit %d: %s", args, code, errb.String())
		}
		return out.String(), errb.String()
	}
	agentRun()
	srv.Allocate(t, retireNode(1000), retireNode(2), map[string]int{"CUSTOM_BAREMETAL_GOLD": 1})
	double.Remove(retireNode(0), retireNode(1), retireNode(2))

	proxy.Reset()
	out, _ := agentRun("--dry-run")
	want := strings.Join([]string{
		"ironic: delete provider " + retireNode(0) + ": vanished from the source, no allocations",
		"ironic: delete provider " + retireNode(1) + ": vanished from the source, no allocations",
		"ironic: reserve inventories of " + retireNode(2) + " in full: vanished from the source, has allocations",
		"dry run: 3 writes planned, nothing written",
	}, "\n") + "\n"
	if out != want || proxy.Writes() != 0 {
		t.Fatalf("dry run with 3 vanished nodes (%d writes sent):\n%s\nwant:\n%s", proxy.Writes(), out, want)
	}
	proxy.Reset()
	_, log := agentRun()
	if got := passWrites(t, log); proxy.Writes() != 3 || len(got) != 1 || got[0] != 3 {
		t.Fatalf("real pass: %d writes sent, sync pass lines say %v; want 3 and [3]", proxy.Writes(), got)
	}
	if code, _ := srv.Do(t, "GET", "/resource_providers/"+retireNode(0), "1.14", nil); code != 404 {
		t.Fatalf("node 0's provider: %d, want 404", code)
	}

	// 5 more vanish (6 of 28 with the allocated one, more than 10%):
	// refused, and the 5 reserved in full.
	var five []string
	for i := 3; i < 8; i++ {
		five = append(five, retireNode(i))
	}
	double.Remove(five...)
	proxy.Reset()
	out, _ = agentRun("--dry-run")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "ironic: retirement refused (max_retirements): 6 of 28 reported providers vanished") ||
		lines[1] != "ironic: reserve inventories of "+five[0]+" in full: vanished from the source, retirement refused" ||
		lines[6] != "dry run: 5 writes planned, nothing written" || proxy.Writes() != 0 {
		t.Fatalf("dry run with 5 of 28 vanished (%d writes sent):\n%s", proxy.Writes(), out)
	}
	proxy.Reset()
	_, log = agentRun()
	if got := passWrites(t, log); proxy.Writes() != 5 || len(got) != 1 || got[0] != 5 {
		t.Fatalf("refused pass: %d writes sent, sync pass lines say %v; want 5 and [5]", proxy.Writes(), got)
	}
	for _, u := range five {
		if _, invs := srv.Inventories(t, u); invs["CUSTOM_BAREMETAL_GOLD"]["reserved"] != 1 {
			t.Fatalf("refused retirement left %s as %v, want reserved in full", u, invs)
		}
	}
	// The recovery: one pass with the limit raised retires them.
	out, _ = agentRun("--dry-run", "--max-retirements", "100%")
	if !strings.Contains(out, "delete provider "+five[4]) || !strings.HasSuffix(out, "dry run: 5 writes planned, nothing written\n") {
		t.Fatalf("dry run with --max-retirements 100%%:\n%s", out)
	}
	agentRun("--max-retirements", "100%")
	for _, u := range five {
		if code, _ := srv.Do(t, "GET", "/resource_providers/"+u, "1.14", nil); code != 404 {
			t.Fatalf("after --max-retirements 100%%: %s answers %d, want 404", u, code)
		}
	}
}
