package flavorreq

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// flavor is m1-like: 2 vCPUs, 4096 MB, 20 GB root, with specs.
func flavor(specs map[string]string) novaclient.Flavor {
	return novaclient.Flavor{ID: "f", Name: "m1", VCPUs: 2, RAM: 4096, Disk: 20, ExtraSpecs: specs}
}

// res builds a sorted resource list from "CLASS", amount pairs.
func res(pairs ...any) []Resource {
	var out []Resource
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Resource{Class: pairs[i].(string), Amount: int64(pairs[i+1].(int))})
	}
	return out
}

var disabled = []string{"COMPUTE_STATUS_DISABLED"}

// TestTranslate: each rule of Nova 26.2's ResourceRequest and pre-filters
// (the references are in the package comment and the functions'), one
// row each, with the request and the query Nova would send.
func TestTranslate(t *testing.T) {
	for _, c := range []struct {
		name   string
		flavor novaclient.Flavor
		opts   Options
		want   Request
		query  string
	}{
		{name: "plain flavor: VCPU, MEMORY_MB, DISK_GB and the disabled-compute pre-filter",
			flavor: flavor(nil),
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "VCPU", 2)}}, RootForbidden: disabled},
			query:  "resources=DISK_GB%3A20%2CMEMORY_MB%3A4096%2CVCPU%3A2&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "disk is root + ephemeral + swap rounded up to GB",
			flavor: novaclient.Flavor{VCPUs: 1, RAM: 512, Disk: 10, Ephemeral: 5, Swap: 1025},
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 17, "MEMORY_MB", 512, "VCPU", 1)}}, RootForbidden: disabled}},
		{name: "no disk at all asks no DISK_GB",
			flavor: novaclient.Flavor{VCPUs: 1, RAM: 512},
			want:   Request{Groups: []Group{{Resources: res("MEMORY_MB", 512, "VCPU", 1)}}, RootForbidden: disabled}},
		{name: "bare metal: zero overrides remove the classes, the custom class stays",
			flavor: flavor(map[string]string{"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0", "resources:CUSTOM_BAREMETAL_GOLD": "1"}),
			want:   Request{Groups: []Group{{Resources: res("CUSTOM_BAREMETAL_GOLD", 1)}}, RootForbidden: disabled},
			query:  "resources=CUSTOM_BAREMETAL_GOLD%3A1&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "an override replaces the flavor's amount",
			flavor: flavor(map[string]string{"resources:MEMORY_MB": "1024"}),
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 1024, "VCPU", 2)}}, RootForbidden: disabled}},
		{name: "a class in a granular group keeps it out of the unsuffixed one; traits both ways; group_policy",
			flavor: flavor(map[string]string{"resources1:VCPU": "2", "trait1:HW_CPU_X86_AVX2": "required", "trait1:CUSTOM_SLOW": "forbidden",
				"resources2:CUSTOM_FPGA": "1", "trait:CUSTOM_RACK_A": "required", "group_policy": "isolate"}),
			want: Request{Groups: []Group{
				{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096), Required: []string{"CUSTOM_RACK_A"}},
				{Suffix: "1", Resources: res("VCPU", 2), Required: []string{"HW_CPU_X86_AVX2"}, Forbidden: []string{"CUSTOM_SLOW"}},
				{Suffix: "2", Resources: res("CUSTOM_FPGA", 1)},
			}, GroupPolicy: "isolate", RootForbidden: disabled},
			query: "group_policy=isolate&required=CUSTOM_RACK_A&required1=HW_CPU_X86_AVX2%2C%21CUSTOM_SLOW&resources=DISK_GB%3A20%2CMEMORY_MB%3A4096&" +
				"resources1=VCPU%3A2&resources2=CUSTOM_FPGA%3A1&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "named suffixes (Placement 1.33)",
			flavor: flavor(map[string]string{"resources_NIC:CUSTOM_VF": "2"}),
			want: Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "VCPU", 2)},
				{Suffix: "_NIC", Resources: res("CUSTOM_VF", 2)}}, RootForbidden: disabled}},
		{name: "dedicated CPUs are PCPU, none VCPU",
			flavor: flavor(map[string]string{"hw:cpu_policy": "dedicated"}),
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "PCPU", 2)}}, RootForbidden: disabled}},
		{name: "dedicated with isolated emulator threads and thread isolation",
			flavor: flavor(map[string]string{"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate", "hw:cpu_thread_policy": "isolate"}),
			want: Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "PCPU", 3),
				Forbidden: []string{"HW_CPU_HYPERTHREADING"}}}, RootForbidden: disabled}},
		{name: "mixed splits by the dedicated mask; require asks for hyperthreads",
			flavor: novaclient.Flavor{VCPUs: 4, RAM: 1024, ExtraSpecs: map[string]string{"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0", "hw:cpu_thread_policy": "require"}},
			want: Request{Groups: []Group{{Resources: res("MEMORY_MB", 1024, "PCPU", 3, "VCPU", 1),
				Required: []string{"HW_CPU_HYPERTHREADING"}}}, RootForbidden: disabled}},
		{name: "explicit PCPU without a policy replaces VCPU",
			flavor: flavor(map[string]string{"resources:PCPU": "2"}),
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "PCPU", 2)}}, RootForbidden: disabled}},
		{name: "encrypted ephemeral disks need the root's trait",
			flavor: flavor(map[string]string{"hw:ephemeral_encryption": "True"}),
			want: Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "VCPU", 2)}},
				RootRequired: []string{"COMPUTE_EPHEMERAL_ENCRYPTION"}, RootForbidden: disabled}},
		{name: "explicit PCPU with a thread policy",
			flavor: flavor(map[string]string{"resources:PCPU": "2", "hw:cpu_thread_policy": "require"}),
			want: Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "PCPU", 2),
				Required: []string{"HW_CPU_HYPERTHREADING"}}}, RootForbidden: disabled}},
		{name: "dedicated with VCPU=0 (zero is no request)",
			flavor: flavor(map[string]string{"hw:cpu_policy": "dedicated", "resources:VCPU": "0"}),
			want:   Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "PCPU", 2)}}, RootForbidden: disabled}},
		{name: "OWNER_NOVA pre-filter: the root owned by Nova, each group free of Cyborg's",
			flavor: flavor(map[string]string{"resources1:CUSTOM_FPGA": "1"}), opts: Options{OwnerNova: true},
			want: Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "VCPU", 2), Forbidden: []string{"OWNER_CYBORG"}},
				{Suffix: "1", Resources: res("CUSTOM_FPGA", 1), Forbidden: []string{"OWNER_CYBORG"}}},
				RootRequired: []string{"OWNER_NOVA"}, RootForbidden: disabled},
			query: "required=%21OWNER_CYBORG&required1=%21OWNER_CYBORG&resources=DISK_GB%3A20%2CMEMORY_MB%3A4096%2CVCPU%3A2&resources1=CUSTOM_FPGA%3A1&" +
				"root_required=OWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := Translate(c.flavor, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if q := got.Query(0); c.query != "" && q != c.query {
				t.Errorf("query %s\nwant  %s", q, c.query)
			}
		})
	}
}

// TestTranslateIgnored: what Nova ignores with a warning is left out and
// noted; the rest of the flavor still translates.
func TestTranslateIgnored(t *testing.T) {
	got, notes, err := Translate(flavor(map[string]string{"resources:FOO": "1", "resources:MEMORY_MB": "-1",
		"resources:DISK_GB": "x", "trait:CUSTOM_A": "preferred", "group_policy": "pack", "hw:numa_nodes": "2"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Request{Groups: []Group{{Resources: res("DISK_GB", 20, "MEMORY_MB", 4096, "VCPU", 2)}}, RootForbidden: disabled}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	for _, w := range []string{"resources:FOO", "resources:MEMORY_MB", "resources:DISK_GB", "trait:CUSTOM_A", "group_policy", "hw:numa_nodes"} {
		if !strings.Contains(strings.Join(notes, "\n"), w) {
			t.Errorf("no note names %s: %q", w, notes)
		}
	}
}

// TestUntranslatable: each flavor Nova refuses, Placement would refuse,
// or that is not modelled, is reported with the key at fault.
func TestUntranslatable(t *testing.T) {
	for specs, key := range map[string]string{
		"hw:cpu_policy=pinned":                                   "hw:cpu_policy",
		"hw:cpu_thread_policy=isolate":                           "hw:cpu_thread_policy",
		"hw:cpu_policy=dedicated hw:cpu_thread_policy=sometimes": "hw:cpu_thread_policy",
		"hw:emulator_threads_policy=isolate":                     "hw:emulator_threads_policy",
		"hw:cpu_policy=mixed":                                    "hw:cpu_dedicated_mask",
		"hw:cpu_policy=mixed hw:cpu_dedicated_mask=0-1":          "hw:cpu_dedicated_mask",
		"hw:cpu_policy=mixed hw:cpu_dedicated_mask=5":            "hw:cpu_dedicated_mask",
		"hw:cpu_dedicated_mask=0":                                "hw:cpu_dedicated_mask",
		"hw:cpu_policy=dedicated resources:VCPU=1":               "hw:cpu_policy",
		"hw:cpu_policy=shared resources1:PCPU=2":                 "hw:cpu_policy",
		"resources:VCPU=2 resources:PCPU=2":                      "resources:PCPU",
		"resources:PCPU=3":                                       "resources:PCPU",
		"resources:PCPU=2 hw:emulator_threads_policy=isolate":    "resources:PCPU",
		"trait:HW_CPU_HYPERTHREADING=required":                   "hw:cpu_thread_policy",
		"hw:cpu_policy=dedicated hw:cpu_thread_policy=isolate trait:HW_CPU_HYPERTHREADING=forbidden": "hw:cpu_thread_policy",
		"hw:cpu_policy=dedicated hw:cpu_dedicated_mask=0":                                            "hw:cpu_dedicated_mask",
		"hw:ephemeral_encryption=true hw:ephemeral_encryption_format=luks":                           "hw:ephemeral_encryption_format",
		"hw:mem_encryption=true":                  "hw:mem_encryption",
		"accel:device_profile=p":                  "accel:device_profile",
		"resources1:VCPU=1 resources2:CUSTOM_X=1": "group_policy",
		"trait1:CUSTOM_X=required":                "resources1",
		"trait:custom_x=required":                 "trait:custom_x",
		"resources:CUSTOM_bad=1":                  "resources:CUSTOM_bad",
	} {
		m := map[string]string{}
		for _, kv := range strings.Fields(specs) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		_, _, err := Translate(flavor(m), Options{})
		var u *Untranslatable
		if !errors.As(err, &u) || u.Key != key || u.Reason == "" {
			t.Errorf("%s: %v, want untranslatable at %s", specs, err, key)
		}
	}
}

// TestTranslateAll keeps every flavor, untranslatable ones with their
// reason, in order.
func TestTranslateAll(t *testing.T) {
	fs := []novaclient.Flavor{flavor(nil), flavor(map[string]string{"hw:cpu_policy": "bogus"}), flavor(nil)}
	got := TranslateAll(fs, Options{})
	if len(got) != 3 || got[0].Err != nil || got[1].Err == nil || got[2].Err != nil || !reflect.DeepEqual(got[1].Flavor, fs[1]) {
		t.Errorf("got %+v", got)
	}
}

// TestNegativeSizes: a negative size (possible in a file) is reported.
func TestNegativeSizes(t *testing.T) {
	_, _, err := Translate(novaclient.Flavor{VCPUs: 1, RAM: 512, Swap: -1}, Options{})
	var u *Untranslatable
	if !errors.As(err, &u) || u.Key != "swap" {
		t.Errorf("got %v, want untranslatable at swap", err)
	}
}
