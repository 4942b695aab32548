package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// fpgaAgent is an agent run by `placement-syncd agent` with one FPGA,
// fpgaDev, on host h1 of a Placement server of ours.
type fpgaAgent struct {
	srv   *placementtest.Server
	cfg   string // its configuration file
	state string // the FPGA driver's state file
	uuid  string // fpgaDev's provider
}

const fpgaDev = "0000:5e:00.0"

// startFPGAAgent starts the agent with state as the FPGA driver's state
// file's content and waits for its first pass to reserve reserved.
func startFPGAAgent(t *testing.T, state string, reserved float64) fpgaAgent {
	t.Helper()
	srv := placementtest.StartOurs(t, placementtest.Options{})
	srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"name": "h1", "uuid": "5e1d0f00-0000-4000-8000-000000000001"})
	dir := t.TempDir()
	a := fpgaAgent{srv: srv, cfg: filepath.Join(dir, "agent.yaml"), state: filepath.Join(dir, "fpga-state.json"), uuid: fpga.ProviderUUID("h1", fpgaDev)}
	devices := filepath.Join(dir, "devices.json")
	writeFile(t, devices, `{"devices":[{"pci_address":"`+fpgaDev+`","vendor":"8086","product":"0b30","function":"f1","regions":2}]}`)
	writeFile(t, a.state, state)
	listen := freeAddr(t)
	writeFile(t, a.cfg, "log: {format: console}\nagent:\n  host: h1\n  interval: 1h\n  placement: {endpoint: \""+srv.URL+"\", token: admin}\n"+
		"  local: {listen: \""+listen+"\", token: s3cret}\n"+
		"  fpga: {enabled: true, file: \""+devices+"\", state_file: \""+a.state+"\", program_command: [\"true\"]}\n")
	// Its log is console lines: the wait is on the inventory it writes.
	syncd.Start(t, daemontest.Options{InProcess: true, NoWait: true, Args: []string{"agent", "--config", a.cfg}})
	waitReserved(t, srv, a.uuid, reserved)
	return a
}

// TestFPGAClear: an agent started with a state file that records a failed
// programming keeps the device reserved; `fpga clear` releases it, and a
// second clear is refused (exit 1, 409).
func TestFPGAClear(t *testing.T) {
	a := startFPGAAgent(t, `{"devices":{"`+fpgaDev+`":{"state":"failed","error":"bitstream rejected","at":"2026-11-24T20:00:00Z"}}}`, 2)
	srv, cfg, state, uuid := a.srv, a.cfg, a.state, a.uuid
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"fpga", "clear", "--config", cfg, "--device", fpgaDev}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), `"result":"cleared"`) {
		t.Fatalf("fpga clear: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if _, invs := srv.Inventories(t, uuid); invs["FPGA"]["reserved"] != 0 {
		t.Fatalf("after fpga clear: %v, want reserved 0", invs)
	}
	if b, _ := os.ReadFile(state); strings.Contains(string(b), "failed") {
		t.Fatalf("state file still records the failure: %s", b)
	}
	stdout.Reset()
	if code := run(t.Context(), []string{"fpga", "clear", "--config", cfg, "--device", fpgaDev}, &stdout, &stderr); code != exitFailure || !strings.Contains(stdout.String(), "not failed") {
		t.Fatalf("second fpga clear: exit %d: %s", code, stdout.String())
	}
}

// TestFPGA_UnknownDevice: the agent answers a device it does not have
// with 404 and the error's text, which the command prints (exit 1).
func TestFPGA_UnknownDevice(t *testing.T) {
	a := startFPGAAgent(t, `{"devices":{}}`, 0)
	const unknown = "0000:ff:00.0"
	for _, args := range [][]string{
		{"fpga", "program", "--config", a.cfg, "--device", unknown, "--image", "f2"},
		{"fpga", "clear", "--config", a.cfg, "--device", unknown},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		want := "placement-syncd: " + strings.Join(args[:2], " ") + ": 404 Not Found: unknown device: " + unknown + "\n"
		if code != exitFailure || stderr.String() != want {
			t.Errorf("%s: exit %d, stderr %q, want exit %d and %q", strings.Join(args[:2], " "), code, stderr.String(), exitFailure, want)
		}
	}
	if _, invs := a.srv.Inventories(t, a.uuid); invs["FPGA"]["reserved"] != 0 {
		t.Errorf("a request for an unknown device changed the known one: %v", invs)
	}
}

// waitReserved waits for the agent's first pass to write the inventory.
func waitReserved(t *testing.T, srv *placementtest.Server, uuid string, want float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	daemontest.Eventually(t, ctx, "the agent wrote the device's inventory", func() bool {
		if code, _ := srv.Do(t, http.MethodGet, "/resource_providers/"+uuid+"/inventories", "1.39", nil); code != http.StatusOK {
			return false
		}
		_, invs := srv.Inventories(t, uuid)
		return len(invs) > 0
	})
	if _, invs := srv.Inventories(t, uuid); invs["FPGA"]["reserved"] != want {
		t.Fatalf("FPGA inventory %v, want reserved %v", invs, want)
	}
}
