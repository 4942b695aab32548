package agent_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// testFPGADurable: a failed programming survives an agent restart (the
// device stays reserved); only the operator's clear or a successful
// programming releases it.
func testFPGADurable(t *testing.T, srv *placementtest.Server) {
	host := "fpga-durable"
	srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"name": host, "uuid": nodeUUID(9, 0)})
	dir := t.TempDir()
	devices := filepath.Join(dir, "devices.json")
	if err := os.WriteFile(devices, []byte(`{"devices":[{"pci_address":"`+devA+`","vendor":"8086","product":"0b30","function":"crypto-v1","regions":2}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/program.sh")
	state := filepath.Join(dir, "fpga-state.json")
	start := func() *env { // one agent process: its driver and agent
		d, err := fpga.New(fpga.Options{Host: host, File: devices, StateFile: state, ProgramTimeout: 2 * time.Second,
			ProgramCommand: []string{"sh", script, "{device}", "{image}", filepath.Join(dir, "out"), filepath.Join(dir, "in")}})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, srv.URL, []drivers.Driver{d}, nil)
		if err := e.agent.SyncOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		return e
	}
	uA := fpga.ProviderUUID(host, devA)
	reserved := func(step string, want float64) {
		t.Helper()
		if _, invs := srv.Inventories(t, uA); invs["FPGA"]["reserved"] != want {
			t.Fatalf("%s: FPGA inventory %v, want reserved %v", step, invs, want)
		}
	}
	e := start()
	if r, err := e.agent.Program(t.Context(), devA, "fail", false); err == nil || r.Result != "failure" {
		t.Fatalf("result %+v, err %v", r, err)
	}
	reserved("failed", 2)
	e = start() // restart
	reserved("failed, after a restart", 2)
	if got := e.counter(t, "placement_syncd_agent_unavailable_resources", "reason", drivers.ReasonProgramFailed); got != 1 {
		t.Fatalf("after a restart: unavailable{program_failed} = %v, want 1", got)
	}
	if r, err := e.agent.ClearFailed(t.Context(), devA); err != nil || r.Result != "cleared" {
		t.Fatalf("clear: %+v %v", r, err)
	}
	reserved("cleared by the operator", 0)
	if _, err := e.agent.ClearFailed(t.Context(), devA); !errors.Is(err, fpga.ErrNotFailed) {
		t.Fatalf("clearing a ready device: %v, want ErrNotFailed", err)
	}
	e = start() // the clear is kept too
	reserved("cleared, after a restart", 0)

	if r, err := e.agent.Program(t.Context(), devA, "hang", false); r.Result != "timeout" {
		t.Fatalf("result %+v, err %v", r, err)
	}
	e = start()
	reserved("timed out, after a restart", 2)
	if r, err := e.agent.Program(t.Context(), devA, "crypto-v3", false); err != nil || r.Result != "success" {
		t.Fatalf("result %+v, err %v", r, err)
	}
	start()
	reserved("programmed, after a restart", 0)
}
