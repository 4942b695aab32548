// Package demo is the demo's stand-in for the outside world. `serve` with
// configs/demo.yaml is the real product: the API, the reconciler and the
// agent, reading Ironic nodes, FPGA devices and Nova aggregates from files
// instead of from Ironic and Nova. Files.WriteInit writes those files
// (`demo init`); a Cycler then plays Ironic, Nova and an operator (`demo
// cycle`): every period it rewrites the files to the next step of a fixed
// scenario, asks the agent for a pass and the reconciler for an
// aggregates run through their local endpoints (both would also notice by
// themselves, within agent.interval and the cron schedule), and now and
// then programs the FPGA through the agent. Nothing here writes to
// Placement.
package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// The demo's fixed names and uuids.
const (
	Conductor     = "demo-conductor" // the nova-compute host of the Ironic nodes
	ComputeUUID   = "c0de0000-0000-4000-8000-000000000001"
	FPGADevice    = "0000:5e:00.0"
	RackA         = "a66a0000-0000-4000-8000-00000000000a"
	FPGAHostsUUID = "a66a0000-0000-4000-8000-00000000000f"
)

// Node is one Ironic node of the demo.
type Node struct {
	UUID, Name, ResourceClass string
}

// Nodes are the demo's Ironic nodes, in the order a Step lists their
// states.
func Nodes() [3]Node {
	return [3]Node{
		{"b0b00000-0000-4000-8000-000000000001", "bm-gold-1", "baremetal.gold"},
		{"b0b00000-0000-4000-8000-000000000002", "bm-gold-2", "baremetal.gold"},
		{"b0b00000-0000-4000-8000-000000000003", "bm-silver-1", "baremetal.silver"},
	}
}

// NodeState is what Ironic would say about a node.
type NodeState int

// The node states the scenario uses.
const (
	Available NodeState = iota
	Cleaning
	CleanWait
	Maintenance // available, in maintenance
)

// provision is the state's Ironic provision_state.
func (s NodeState) provision() string {
	switch s {
	case Cleaning:
		return "cleaning"
	case CleanWait:
		return "clean wait"
	default:
		return "available"
	}
}

// Step is the world at one step of the scenario.
type Step struct {
	Note  string
	Nodes [3]NodeState
	// FPGAHosts: the compute host is in Nova's aggregate fpga-hosts.
	FPGAHosts bool
	// Program, when set, is the image the FPGA is programmed with.
	Program string
}

// Steps is the scenario, steps 1 to 6, one per period, wrapping around.
// The last step is the state WriteInit writes, so that every round
// starts from it.
func Steps() []Step {
	return []Step{
		{Note: "bm-gold-1 starts cleaning (reserved = total); Nova adds demo-compute to aggregate fpga-hosts",
			Nodes: [3]NodeState{Cleaning, Available, Available}, FPGAHosts: true},
		{Note: "bm-gold-1 waits for cleaning; bm-gold-2 goes into maintenance; the FPGA is programmed with crypto-v2",
			Nodes: [3]NodeState{CleanWait, Maintenance, Available}, FPGAHosts: true, Program: "crypto-v2"},
		{Note: "bm-gold-1 is clean and available again (reserved = 0)",
			Nodes: [3]NodeState{Available, Maintenance, Available}, FPGAHosts: true},
		{Note: "bm-gold-2 leaves maintenance; Nova removes demo-compute from fpga-hosts",
			Nodes: [3]NodeState{Available, Available, Available}},
		{Note: "bm-silver-1 starts cleaning; the FPGA is programmed back to gzip-v1",
			Nodes: [3]NodeState{Available, Available, Cleaning}, Program: "gzip-v1"},
		{Note: "bm-silver-1 is clean: every node available, as demo init wrote them; Nova aggregate rack-a holds demo-conductor (its 3 nodes)",
			Nodes: [3]NodeState{Available, Available, Available}},
	}
}

// Files are the sources the config's agent and reconciler read.
type Files struct {
	Static, Ironic, FPGA, Nova string
	Host                       string // agent.host: the compute host with the FPGA
}

// FilesFrom takes the files from the demo's configuration.
func FilesFrom(cfg config.Config) (Files, error) {
	f := Files{Static: cfg.Agent.Static.File, Ironic: cfg.Agent.Ironic.File, FPGA: cfg.Agent.FPGA.File,
		Nova: cfg.Reconciler.Nova.File, Host: cfg.Agent.Host}
	if f.Static == "" || f.Ironic == "" || f.FPGA == "" || f.Nova == "" || f.Host == "" {
		return f, errors.New("demo: the config needs agent.host, agent.static.file, agent.ironic.file, agent.fpga.file and reconciler.nova.file (see configs/demo.yaml)")
	}
	return f, nil
}

// WriteInit writes every source in its step-0 state.
func (f Files) WriteInit() error {
	compute := map[string]any{"providers": []map[string]any{{
		"uuid": ComputeUUID, "name": f.Host, "owner": "OWNER_NOVA", "traits": []string{"COMPUTE_NODE"},
		"inventories": map[string]any{
			"VCPU":      map[string]any{"total": 16, "allocation_ratio": 4.0},
			"MEMORY_MB": map[string]any{"total": 65536, "reserved": 512},
			"DISK_GB":   map[string]any{"total": 1000},
		},
	}}}
	b, err := yaml.Marshal(compute)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	header := "# Written by `placement-syncd demo init`: the compute node that nova-compute\n# would report for " + f.Host + "; the FPGA is its child.\n"
	if err := writeAtomic(f.Static, append([]byte(header), b...)); err != nil {
		return err
	}
	devices := map[string]any{"devices": []map[string]any{{
		"pci_address": FPGADevice, "vendor": "8086", "product": "0b30", "function": "gzip-v1", "regions": 2,
	}}}
	if err := writeJSON(f.FPGA, devices); err != nil {
		return err
	}
	steps := Steps()
	return f.Write(steps[len(steps)-1])
}

// Write rewrites the Ironic and Nova files for a step.
func (f Files) Write(s Step) error {
	if err := writeJSON(f.Ironic, map[string]any{"nodes": ironicNodes(s)}); err != nil {
		return err
	}
	hypervisors := []map[string]any{{
		"id": ComputeUUID, "hypervisor_hostname": f.Host, "service": map[string]any{"host": f.Host},
	}}
	for _, n := range Nodes() {
		hypervisors = append(hypervisors, map[string]any{
			"id": n.UUID, "hypervisor_hostname": n.UUID, "service": map[string]any{"host": Conductor},
		})
	}
	fpgaHosts := []string{}
	if s.FPGAHosts {
		fpgaHosts = []string{f.Host}
	}
	// rack-a is availability zone az1; demo-compute, in no zone, is in
	// Nova's default zone.
	aggregates := []map[string]any{
		{"uuid": RackA, "name": "rack-a", "hosts": []string{Conductor}, "metadata": map[string]string{"availability_zone": "az1"}},
		{"uuid": FPGAHostsUUID, "name": "fpga-hosts", "hosts": fpgaHosts},
	}
	// os-services: the nova-compute of the agent's host and the Ironic
	// conductor's, whose versions the gate needs.
	services := []map[string]any{
		{"binary": "nova-compute", "host": f.Host, "state": "up", "status": "enabled", "forced_down": false},
		{"binary": "nova-compute", "host": Conductor, "state": "up", "status": "enabled", "forced_down": false},
	}
	// servers and migrations (GET /servers?all_tenants=1 and
	// /os-migrations): the demo boots no instance, so the audit finds any
	// allocation made by hand an orphan.
	return writeJSON(f.Nova, map[string]any{"aggregates": aggregates, "hypervisors": hypervisors, "services": services,
		"servers": []any{}, "migrations": []any{}, "flavors": Flavors()})
}

// Flavors are Nova's flavors in the demo (GET /flavors/detail's
// "flavors", with extra specs), for capacity by flavor: two that fit the
// compute node, the two bare-metal flavors (their nodes are cleaning now
// and then) and a private one whose TPM the count does not model, which
// is reported with its reason instead of counted.
func Flavors() []map[string]any {
	flavor := func(id, name string, vcpus, ram, disk int, public bool, specs map[string]string) map[string]any {
		return map[string]any{"id": id, "name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "swap": "",
			"OS-FLV-EXT-DATA:ephemeral": 0, "os-flavor-access:is_public": public, "extra_specs": specs}
	}
	baremetal := func(class string) map[string]string {
		return map[string]string{"resources:" + class: "1",
			"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}
	}
	return []map[string]any{
		flavor("1", "m1.small", 2, 2048, 20, true, map[string]string{}),
		flavor("2", "m1.large", 8, 16384, 80, true, map[string]string{}),
		flavor("3", "baremetal.gold", 4, 8192, 100, true, baremetal("CUSTOM_BAREMETAL_GOLD")),
		flavor("4", "baremetal.silver", 4, 8192, 100, true, baremetal("CUSTOM_BAREMETAL_SILVER")),
		flavor("5", "m1.tpm", 2, 2048, 20, false, map[string]string{"hw:tpm_version": "2.0", "hw:tpm_model": "tpm-crb"}),
	}
}

// ironicNodes is GET /v1/nodes/detail's "nodes" at step s.
func ironicNodes(s Step) []map[string]any {
	nodes := Nodes()
	out := make([]map[string]any, len(nodes))
	for i, n := range nodes {
		st := s.Nodes[i]
		reason := any(nil)
		if st == Maintenance {
			reason = "demo: firmware upgrade"
		}
		out[i] = map[string]any{
			"uuid": n.UUID, "name": n.Name, "resource_class": n.ResourceClass,
			"power_state": "power off", "provision_state": st.provision(), "target_provision_state": nil,
			"maintenance": st == Maintenance, "maintenance_reason": reason, "instance_uuid": nil,
			"traits": []string{"CUSTOM_DEMO"}, "conductor_group": "",
		}
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("demo: %s: %w", path, err)
	}
	return writeAtomic(path, append(b, '\n'))
}

// writeAtomic replaces path in one rename, so that a reader never sees a
// half-written file.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}
