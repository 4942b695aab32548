package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/internal/harness/placementtest"
)

// TestFPGAClear: an agent started with a state file that records a failed
// programming keeps the device reserved; `fpga clear` releases it, and a
// second clear is refused (exit 1, 409).
func TestFPGAClear(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"name": "h1", "uuid": "5e1d0f00-0000-4000-8000-000000000001"})
	dir := t.TempDir()
	const dev = "0000:5e:00.0"
	devices, state := filepath.Join(dir, "devices.json"), filepath.Join(dir, "fpga-state.json")
	writeFile(t, devices, `{"devices":[{"pci_address":"`+dev+`","vendor":"8086","product":"0b30","function":"f1","regions":2}]}`)
	writeFile(t, state, `{"devices":{"`+dev+`":{"state":"failed","error":"bitstream rejected","at":"2026-11-24T20:00:00Z"}}}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(dir, "agent.yaml")
	writeFile(t, cfg, "log: {format: console}\nagent:\n  host: h1\n  interval: 1h\n  placement: {endpoint: \""+srv.URL+"\", token: admin}\n"+
		"  local: {listen: \""+listen+"\", token: s3cret}\n"+
		"  fpga: {enabled: true, file: \""+devices+"\", state_file: \""+state+"\", program_command: [\"true\"]}\n")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"agent", "--config", cfg}, &bytes.Buffer{}, &bytes.Buffer{}) }()
	defer func() { cancel(); <-done }()
	uuid := fpga.ProviderUUID("h1", dev)
	waitReserved(t, srv, uuid, 2)

	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"fpga", "clear", "--config", cfg, "--device", dev}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), `"result":"cleared"`) {
		t.Fatalf("fpga clear: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if _, invs := srv.Inventories(t, uuid); invs["FPGA"]["reserved"] != 0 {
		t.Fatalf("after fpga clear: %v, want reserved 0", invs)
	}
	if b, _ := os.ReadFile(state); strings.Contains(string(b), "failed") {
		t.Fatalf("state file still records the failure: %s", b)
	}
	stdout.Reset()
	if code := run(t.Context(), []string{"fpga", "clear", "--config", cfg, "--device", dev}, &stdout, &stderr); code != exitFailure || !strings.Contains(stdout.String(), "not failed") {
		t.Fatalf("second fpga clear: exit %d: %s", code, stdout.String())
	}
}

// waitReserved waits for the agent's first pass to write the inventory.
func waitReserved(t *testing.T, srv *placementtest.Server, uuid string, want float64) {
	t.Helper()
	for i := 0; ; i++ {
		code, _ := srv.Do(t, http.MethodGet, "/resource_providers/"+uuid+"/inventories", "1.39", nil)
		if code == http.StatusOK {
			if _, invs := srv.Inventories(t, uuid); len(invs) > 0 {
				if invs["FPGA"]["reserved"] != want {
					t.Fatalf("FPGA inventory %v, want reserved %v", invs, want)
				}
				return
			}
		}
		if i > 300 {
			t.Fatal("the agent never wrote the device's inventory")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
