package flavorreq_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// specPool are extra specs random flavors draw from: every rule, valid
// and invalid values, and conflicts.
var specPool = [][2]string{
	{"resources:VCPU", "0"}, {"resources:VCPU", "3"}, {"resources:MEMORY_MB", "0"}, {"resources:MEMORY_MB", "64"},
	{"resources:DISK_GB", "0"}, {"resources:CUSTOM_BAREMETAL_GOLD", "1"}, {"resources:PCPU", "2"}, {"resources:PCPU", "3"},
	{"resources1:VCPU", "1"}, {"resources1:PCPU", "2"}, {"resources1:CUSTOM_FPGA", "1"}, {"resources2:CUSTOM_VF", "2"},
	{"resources_NIC:CUSTOM_VF", "1"}, {"resources:FOO", "1"}, {"resources:MEMORY_MB", "-1"}, {"resources:DISK_GB", "x"},
	{"trait:CUSTOM_RACK_A", "required"}, {"trait:CUSTOM_SLOW", "forbidden"}, {"trait1:HW_CPU_X86_AVX2", "required"},
	{"trait2:CUSTOM_SLOW", "forbidden"}, {"trait:CUSTOM_A", "preferred"}, {"trait:HW_CPU_HYPERTHREADING", "required"},
	{"trait_NIC:CUSTOM_PHYSNET_A", "required"}, {"group_policy", "isolate"}, {"group_policy", "none"}, {"group_policy", "pack"},
	{"hw:cpu_policy", "dedicated"}, {"hw:cpu_policy", "shared"}, {"hw:cpu_policy", "mixed"}, {"hw:cpu_policy", "pinned"},
	{"hw:cpu_dedicated_mask", "^0"}, {"hw:cpu_dedicated_mask", "0-1"}, {"hw:cpu_thread_policy", "isolate"},
	{"hw:cpu_thread_policy", "require"}, {"hw:cpu_thread_policy", "prefer"}, {"hw:emulator_threads_policy", "isolate"},
	{"hw:emulator_threads_policy", "share"}, {"hw:ephemeral_encryption", "true"}, {"hw:numa_nodes", "1"},
}

// randomFlavors are n seeded flavors of up to four pool specs each.
func randomFlavors(n int) []novaclient.Flavor {
	r := rand.New(rand.NewPCG(41, 26))
	out := make([]novaclient.Flavor, 0, n)
	for range n {
		specs := map[string]string{}
		for range r.IntN(5) {
			kv := specPool[r.IntN(len(specPool))]
			specs[kv[0]] = kv[1]
		}
		out = append(out, novaclient.Flavor{VCPUs: int64(1 + r.IntN(4)), RAM: int64(256 * r.IntN(5)), Disk: int64(r.IntN(3) * 10),
			Ephemeral: int64(r.IntN(2)), Swap: int64(r.IntN(3) * 700), ExtraSpecs: specs})
	}
	return out
}

// novaQueries runs Debian's Nova 26.2 scheduler code on the flavors
// (testdata/nova_request.py).
func novaQueries(t *testing.T, flavors []novaclient.Flavor) []string {
	t.Helper()
	in, err := json.Marshal(flavors)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "testdata/nova_request.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Nova's scheduler code (apt-get install python3-nova): %v\n%s", err, stderr.String())
	}
	var queries []string
	if err := json.Unmarshal(out, &queries); err != nil || len(queries) != len(flavors) {
		t.Fatalf("answer %s: %v", out, err)
	}
	return queries
}

// TestAgainstNova: for the table's flavors and random ones, the query is
// the one Nova 26.2's own ResourceRequest renders (at Nova's default
// limit), and a flavor Nova refuses is reported as NovaRefuses. A flavor
// reported PlacementRefuses or NotModelled is one Nova renders a query
// for: the first is refused by Placement, the second not followed here.
func TestAgainstNova(t *testing.T) {
	fs := append(flavors(), randomFlavors(400)...)
	queries := novaQueries(t, fs)
	counts := map[string]int{}
	for i, f := range fs {
		want := queries[i]
		req, _, err := flavorreq.Translate(f, flavorreq.Options{})
		var u *flavorreq.Untranslatable
		switch {
		case err == nil:
			counts["same query"]++
			if got := req.Query(1000); got != want {
				t.Errorf("%v (vcpus %d):\n got  %s\n nova %s", f.ExtraSpecs, f.VCPUs, got, want)
			}
		case !errors.As(err, &u):
			t.Errorf("%v: %v is not an Untranslatable", f.ExtraSpecs, err)
		case u.Kind == flavorreq.NovaRefuses:
			counts["both refuse"]++
			if len(want) < 4 || want[:4] != "ERR " {
				t.Errorf("%v (vcpus %d): we say %v; Nova renders %s", f.ExtraSpecs, f.VCPUs, err, want)
			}
		default:
			counts[u.Kind]++
			if len(want) >= 4 && want[:4] == "ERR " {
				t.Errorf("%v: we say %v; Nova refuses: %s", f.ExtraSpecs, err, want)
			}
		}
	}
	if counts["same query"] < 50 || counts["both refuse"] < 20 {
		t.Errorf("too few of each outcome to mean much: %v", counts)
	}
	t.Logf("%d flavors: %v", len(fs), counts)
}
