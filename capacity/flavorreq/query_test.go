package flavorreq_test

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// novaMicroversion is the Placement microversion Nova 26.2's scheduler
// asks allocation candidates at (root_required, resourceless groups).
const novaMicroversion = "1.36"

// parsed is our server's parse of a rendered query, in flavorreq's form,
// or a failure with the server's message.
func parsed(t *testing.T, raw string) (flavorreq.Request, string) {
	t.Helper()
	mv, err := microversion.Parse(novaMicroversion)
	if err != nil {
		t.Fatal(err)
	}
	req, herr := candidates.ParseQuery(raw, query.Values(raw), mv)
	if herr != nil {
		return flavorreq.Request{}, herr.Error()
	}
	out := flavorreq.Request{GroupPolicy: req.GroupPolicy, RootRequired: req.RootRequired, RootForbidden: req.RootForbidden}
	for _, g := range req.Groups {
		fg := flavorreq.Group{Suffix: g.Suffix, Forbidden: g.Forbidden}
		for _, anyOf := range g.Required {
			fg.Required = append(fg.Required, anyOf...)
		}
		for _, r := range g.Resources {
			fg.Resources = append(fg.Resources, flavorreq.Resource{Class: r.Class, Amount: r.Amount})
		}
		slices.SortFunc(fg.Resources, func(a, b flavorreq.Resource) int { return cmp.Compare(a.Class, b.Class) })
		slices.Sort(fg.Required)
		slices.Sort(fg.Forbidden)
		out.Groups = append(out.Groups, fg)
	}
	slices.SortFunc(out.Groups, func(a, b flavorreq.Group) int { return cmp.Compare(a.Suffix, b.Suffix) })
	slices.Sort(out.RootRequired)
	slices.Sort(out.RootForbidden)
	return out, ""
}

// flavors cover every rule TestTranslate checks, with and without the
// OWNER_NOVA pre-filter.
func flavors() []novaclient.Flavor {
	specs := []map[string]string{
		nil,
		{"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0", "resources:CUSTOM_BAREMETAL_GOLD": "1"},
		{"resources1:VCPU": "2", "trait1:HW_CPU_X86_AVX2": "required", "trait1:CUSTOM_SLOW": "forbidden",
			"resources2:CUSTOM_FPGA": "1", "trait:CUSTOM_RACK_A": "required", "group_policy": "isolate"},
		{"resources_NIC:CUSTOM_VF": "2", "trait_NIC:CUSTOM_PHYSNET_A": "required"},
		{"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate", "hw:cpu_thread_policy": "isolate"},
		{"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "1-3", "hw:cpu_thread_policy": "require"},
		{"hw:ephemeral_encryption": "yes", "trait:CUSTOM_X": "forbidden"},
		{"resources:PCPU": "4", "hw:cpu_thread_policy": "isolate", "resources:VCPU": "0"},
	}
	var out []novaclient.Flavor
	for i, s := range specs {
		out = append(out, novaclient.Flavor{Name: "f", VCPUs: 4, RAM: 1024, Disk: int64(i), Swap: 512, ExtraSpecs: s})
	}
	return out
}

// TestQueriesParse: our server's allocation candidates parser accepts
// every query rendered, at Nova's microversion, and reads back the same
// request, with a limit as Nova sends or without.
func TestQueriesParse(t *testing.T) {
	for _, o := range []flavorreq.Options{{}, {OwnerNova: true}} {
		for i, r := range flavorreq.TranslateAll(flavors(), o) {
			if r.Err != nil {
				t.Fatalf("flavor %d: %v", i, r.Err)
			}
			for _, limit := range []int{0, 1000} {
				raw := r.Request.Query(limit)
				got, msg := parsed(t, raw)
				if msg != "" {
					t.Errorf("%s refused: %s", raw, msg)
					continue
				}
				if !reflect.DeepEqual(got, r.Request) {
					t.Errorf("%s parsed as %+v, want %+v", raw, got, r.Request)
				}
			}
		}
	}
}

// FuzzTranslate: arbitrary extra specs and amounts never panic, and a
// flavor that translates renders a query our server parses.
func FuzzTranslate(f *testing.F) {
	f.Add("hw:cpu_policy", "mixed", "hw:cpu_dedicated_mask", "^0,2-3", int64(4), int64(100))
	f.Add("resources1:VCPU", "2", "trait1:CUSTOM_A", "required", int64(2), int64(0))
	f.Add("resources:VCPU", "0", "group_policy", "none", int64(0), int64(-5))
	f.Add("trait:", "required", "resources_x:CUSTOM_Y", " 3 ", int64(-1), int64(1<<40))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, vcpus, swap int64) {
		fl := novaclient.Flavor{VCPUs: vcpus, RAM: 512, Disk: 1, Swap: swap, ExtraSpecs: map[string]string{k1: v1, k2: v2}}
		for _, o := range []flavorreq.Options{{}, {OwnerNova: true}} {
			req, _, err := flavorreq.Translate(fl, o)
			if err != nil {
				continue
			}
			if _, msg := parsed(t, req.Query(0)); msg != "" {
				t.Errorf("%v: %s refused: %s", fl.ExtraSpecs, req.Query(0), msg)
			}
		}
	})
}
