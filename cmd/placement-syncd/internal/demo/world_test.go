package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite_NodeStates checks that a step's node states reach the Ironic
// file as Ironic would say them, and that the last step is every node
// available, the state WriteInit leaves.
func TestWrite_NodeStates(t *testing.T) {
	dir := t.TempDir()
	f := Files{Static: filepath.Join(dir, "s.yaml"), Ironic: filepath.Join(dir, "n.json"),
		FPGA: filepath.Join(dir, "f.json"), Nova: filepath.Join(dir, "nova.json"), Host: "cn-1"}
	if err := f.Write(Step{Nodes: [3]NodeState{Cleaning, Maintenance, CleanWait}}); err != nil {
		t.Fatal(err)
	}
	got := readNodes(t, f.Ironic)
	want := []struct {
		provision   string
		maintenance bool
	}{{"cleaning", false}, {"available", true}, {"clean wait", false}}
	for i, w := range want {
		if got[i].ProvisionState != w.provision || got[i].Maintenance != w.maintenance {
			t.Errorf("node %d: %+v, want %+v", i, got[i], w)
		}
	}
	if err := f.WriteInit(); err != nil {
		t.Fatal(err)
	}
	for i, n := range readNodes(t, f.Ironic) {
		if n.ProvisionState != "available" || n.Maintenance {
			t.Errorf("after init, node %d: %+v, want available", i, n)
		}
	}
	if _, err := os.Stat(f.Static); err != nil {
		t.Errorf("init wrote no static file: %v", err)
	}
}

type ironicNode struct {
	ProvisionState string `json:"provision_state"`
	Maintenance    bool   `json:"maintenance"`
}

func readNodes(t *testing.T, path string) []ironicNode {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Nodes []ironicNode }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(doc.Nodes))
	}
	return doc.Nodes
}
