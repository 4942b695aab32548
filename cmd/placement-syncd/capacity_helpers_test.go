package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// capacityFlavors are Nova's flavors the capacity tests add to the
// demo's Nova file: one that fits the compute node, the bare-metal gold
// flavor (its nodes are cleaning now and then) and one Nova refuses.
func capacityFlavors() []map[string]any {
	flavor := func(id, name string, vcpus, ram, disk int, public bool, specs map[string]string) map[string]any {
		return map[string]any{"id": id, "name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "swap": "",
			"OS-FLV-EXT-DATA:ephemeral": 0, "os-flavor-access:is_public": public, "extra_specs": specs}
	}
	return []map[string]any{
		flavor("1", "m1.small", 2, 2048, 20, true, map[string]string{}),
		flavor("2", "baremetal.gold", 4, 8192, 100, true, map[string]string{
			"resources:CUSTOM_BAREMETAL_GOLD": "1", "resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}),
		flavor("3", "broken", 2, 2048, 20, false, map[string]string{"hw:cpu_policy": "sometimes"}),
	}
}

// enableCapacity turns capacity by flavor on in the demo config at
// cfgPath and gives the Nova file `demo init` wrote flavors, and rack-a
// the availability zone az1. `demo cycle` rewrites the file without
// them: the daemon keeps what it read first (capacity.refresh is 5m).
func enableCapacity(t *testing.T, cfgPath string) {
	t.Helper()
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Reconciler struct {
			Nova struct {
				File string `yaml:"file"`
			} `yaml:"nova"`
		} `yaml:"reconciler"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil || cfg.Reconciler.Nova.File == "" {
		t.Fatalf("%s: no reconciler.nova.file (%v)", cfgPath, err)
	}
	writeFile(t, cfgPath, string(raw)+"\ncapacity:\n  enabled: true\n  per_host: true\n  os_capacity_metrics: true\n")
	novaRaw, err := os.ReadFile(cfg.Reconciler.Nova.File)
	if err != nil {
		t.Fatal(err)
	}
	var nova map[string]any
	if err := json.Unmarshal(novaRaw, &nova); err != nil {
		t.Fatal(err)
	}
	for _, a := range nova["aggregates"].([]any) {
		if agg := a.(map[string]any); agg["name"] == "rack-a" {
			agg["metadata"] = map[string]string{"availability_zone": "az1"}
		}
	}
	nova["flavors"] = capacityFlavors()
	out, err := json.Marshal(nova)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg.Reconciler.Nova.File, string(out))
}

// waitCapacity waits until the daemon at api has read Nova's flavors.
func waitCapacity(t *testing.T, ctx context.Context, api string) {
	t.Helper()
	eventually(t, ctx, "capacity by flavor has read Nova's flavors", func() bool {
		code, raw := httpGet(t, ctx, api+"/metrics")
		return code == 200 && strings.Contains(string(raw), "\nplacement_syncd_capacity_flavors 3\n")
	})
}
