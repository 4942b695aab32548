package count_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

func unit(class string, total int64) inv {
	return inv{class: class, total: total, minUnit: 1, maxUnit: total, step: 1, ratio: 1}
}

// host is a flat compute node named name with VCPU, MEMORY_MB, DISK_GB.
func host(name string, change func(*prov)) prov {
	p := prov{uuid: "u-" + name, name: name, invs: []inv{unit("VCPU", 8), unit("MEMORY_MB", 8192), unit("DISK_GB", 100)}}
	if change != nil {
		change(&p)
	}
	return p
}

func countOne(t *testing.T, c *cloud, f novaclient.Flavor, aggs map[string]count.Aggregate) count.Flavor {
	t.Helper()
	res := flavorreq.TranslateAll([]novaclient.Flavor{f}, flavorreq.Options{})
	rep := count.Count(count.Input{Snapshot: c.snapshot(), Flavors: res, Aggregates: aggs, DefaultZone: "nova", HeldBack: c.reasons()})
	if len(rep.Flavors) != 1 {
		t.Fatalf("%d flavors reported", len(rep.Flavors))
	}
	return rep.Flavors[0]
}

func hostCounts(f count.Flavor) map[string]int64 {
	out := map[string]int64{}
	for _, h := range f.Hosts {
		out[h.Name] = h.Count
	}
	return out
}

// TestClosedForm pins the flat path's edge cases host by host.
func TestClosedForm(t *testing.T) {
	small := novaclient.Flavor{Name: "small", VCPUs: 1, RAM: 1024, Disk: 10}
	c := &cloud{provs: []prov{
		host("plain", nil), // min(8/1, 8192/1024, 100/10) = 8
		host("max-unit", func(p *prov) { p.invs[2].maxUnit = 5 }),                                             // 10 GB > max_unit 5
		host("step", func(p *prov) { p.invs[1].step = 768 }),                                                  // 1024 is no multiple of 768
		host("min-unit", func(p *prov) { p.invs[2].minUnit = 20 }),                                            // 10 GB < min_unit 20
		host("ratio", func(p *prov) { p.invs[0].ratio = 4; p.invs[1].total = 65536; p.invs[2].total = 1000 }), // 32 VCPU: 32
		host("reserved", func(p *prov) { p.invs[0].reserved = 2; p.invs[1].used = 2048 }),                     // 6 VCPU, 6 GB free: 6
		host("used-up", func(p *prov) { p.invs[2].used = 95 }),                                                // 5 GB free: 0
		host("disabled", func(p *prov) { p.traits = []string{"COMPUTE_STATUS_DISABLED"} }),
		host("held", func(p *prov) { p.invs[0].reserved = 8; p.heldFor = "maintenance" }),
		host("held-unnamed", func(p *prov) { p.invs[1].reserved = 8192 }),
		host("over", func(p *prov) { p.invs[0].used = 9 }), // used over capacity: nothing
	}}
	f := countOne(t, c, small, nil)
	want := map[string]int64{"plain": 8, "ratio": 32, "reserved": 6, "held": 0, "held-unnamed": 0}
	if got := hostCounts(f); !maps.Equal(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
	if f.Cloud != 46 {
		t.Errorf("cloud %d, want 46", f.Cloud)
	}
	wantHeld := map[string]int64{"maintenance": 8, count.ReasonReserved: 8}
	if !maps.Equal(f.HeldBack, wantHeld) {
		t.Errorf("held back %v, want %v", f.HeldBack, wantHeld)
	}
	for _, h := range f.Hosts {
		if h.Name == "held" && (h.Count != 0 || h.HeldBack != 8 || h.Reason != "maintenance") {
			t.Errorf("held host %+v", h)
		}
	}
	names := make([]string, 0, len(f.Hosts))
	for _, h := range f.Hosts {
		names = append(names, h.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("hosts not by name: %v", names)
	}
}

// TestZonesAndAggregates checks the sums: a host in an aggregate with a
// zone is in that zone, one in none is in the default zone, aggregates
// sum their member hosts.
func TestZonesAndAggregates(t *testing.T) {
	small := novaclient.Flavor{Name: "small", VCPUs: 1, RAM: 1024, Disk: 10}
	c := &cloud{provs: []prov{
		host("a", func(p *prov) { p.aggs = []string{"agg-az1", "agg-gpu"} }),
		host("b", func(p *prov) { p.aggs = []string{"agg-az1"}; p.invs[0].total = 2 }),
		host("c", func(p *prov) { p.aggs = []string{"agg-gpu"}; p.invs[0].total = 3 }),
		host("d", nil),
	}}
	aggs := map[string]count.Aggregate{"agg-az1": {Name: "az1-hosts", Zone: "az1"}, "agg-gpu": {Name: "gpu"}}
	f := countOne(t, c, small, aggs)
	if want := map[string]int64{"az1": 10, "nova": 11}; !maps.Equal(f.Zones, want) {
		t.Errorf("zones %v, want %v", f.Zones, want)
	}
	if want := map[string]int64{"agg-az1": 10, "agg-gpu": 11}; !maps.Equal(f.Aggregates, want) {
		t.Errorf("aggregates %v, want %v", f.Aggregates, want)
	}
	for _, h := range f.Hosts {
		if want := map[string]string{"a": "az1", "b": "az1", "c": "nova", "d": "nova"}[h.Name]; h.Zone != want {
			t.Errorf("host %s in zone %q, want %q", h.Name, h.Zone, want)
		}
	}
}

// TestReported checks that no flavor is dropped: a refused translation
// is reported with its reason and no counts, a request Placement would
// refuse with a note and zero.
func TestReported(t *testing.T) {
	c := &cloud{provs: []prov{host("a", nil)}}
	res := []flavorreq.Result{
		{Flavor: novaclient.Flavor{Name: "refused", ID: "1"}, Err: errors.New("hw:cpu_policy: bad value")},
		{Flavor: novaclient.Flavor{Name: "unknown-trait", ID: "2", Public: true}, Request: flavorreq.Request{
			Groups: []flavorreq.Group{{Resources: []flavorreq.Resource{{Class: "VCPU", Amount: 1}}, Required: []string{"CUSTOM_NOWHERE"}}}}},
	}
	rep := count.Count(count.Input{Snapshot: c.snapshot(), Flavors: res, DefaultZone: "nova"})
	if len(rep.Flavors) != 2 || rep.Flavors[0].Name != "refused" || rep.Flavors[1].Name != "unknown-trait" {
		t.Fatalf("flavors %+v", rep.Flavors)
	}
	if f := rep.Flavors[0]; f.Err != "hw:cpu_policy: bad value" || f.Cloud != 0 || f.Hosts != nil {
		t.Errorf("refused flavor %+v", f)
	}
	f := rep.Flavors[1]
	if f.Err != "" || f.Cloud != 0 || !f.Public || len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "No such trait(s): CUSTOM_NOWHERE") {
		t.Errorf("unknown trait flavor %+v", f)
	}
}
