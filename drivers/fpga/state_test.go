package fpga_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
)

// TestStateFile_InterruptedProgramming: a device the agent was
// programming when it stopped comes back failed (reserved), and a
// corrupt state file is an error, not a silent release.
func TestStateFile_InterruptedProgramming(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "fpga-state.json")
	opts := fpga.Options{Host: "host-a", File: "testdata/devices.json", StateFile: state, ProgramCommand: []string{"true"}}
	d, err := fpga.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := d.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("devices %v, %v", devs, err)
	}
	bdf := devs[0].PCIAddress
	if _, err := d.BeginProgramming(bdf); err != nil {
		t.Fatal(err)
	}
	// The process stops here; a new one reads the file.
	d2, err := fpga.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d2.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	inv := tree.Providers[0].Inventories["FPGA"]
	if inv.Unavailable != drivers.ReasonProgramFailed {
		t.Fatalf("interrupted programming after a restart: unavailable %q, want %q", inv.Unavailable, drivers.ReasonProgramFailed)
	}
	if st := d2.Status()[0]; st.State != fpga.StateFailed || !strings.Contains(st.Error, "stopped while programming") {
		t.Fatalf("status %+v", st)
	}
	if err := os.WriteFile(state, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := fpga.New(opts); err == nil || !strings.Contains(err.Error(), "state file") {
		t.Fatalf("corrupt state file: %v, want an error", err)
	}
}
