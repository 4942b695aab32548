package count_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// osCapacityRequest is the request StackHPC's os-capacity builds from a
// flavor (os_capacity/prometheus.py, get_placement_request), not Nova's:
// `resources:CLASS` extra specs set amounts, `trait:NAME=required` adds a
// required trait, `hw:cpu_policy=dedicated` asks PCPU for the vCPUs, and
// only when no resource was named that way are VCPU, MEMORY_MB and
// DISK_GB (root + ephemeral, no swap) asked; granular groups are not
// read. Its query adds !COMPUTE_STATUS_DISABLED to the required traits
// (any provider's, not the root's).
func osCapacityRequest(f novaclient.Flavor) (map[string]int64, string) {
	res := map[string]int64{}
	var required []string
	defaults := func(vcpu bool) {
		res["MEMORY_MB"], res["DISK_GB"] = f.RAM, f.Disk+f.Ephemeral
		if vcpu {
			res["VCPU"] = f.VCPUs
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
		v := f.ExtraSpecs[k]
		switch {
		case strings.HasPrefix(k, "trait:") && v == "required":
			required = append(required, strings.TrimPrefix(k, "trait:"))
		case strings.HasPrefix(k, "resources:"):
			n, _ := strconv.ParseInt(v, 10, 64)
			res[strings.TrimPrefix(k, "resources:")] = n
		case k == "hw:cpu_policy" && v == "dedicated":
			res["PCPU"] = f.VCPUs
			defaults(false)
		}
	}
	if len(res) == 0 {
		defaults(true)
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(res)) {
		if res[c] != 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", c, res[c]))
		}
	}
	q := url.Values{"resources": {strings.Join(parts, ",")}, "required": {strings.Join(append(required, "!COMPUTE_STATUS_DISABLED"), ",")}}
	return res, q.Encode()
}

// osCapacity is os-capacity's count of a flavor: one GET
// /allocation_candidates without limit, at 1.29, then for every provider
// in the provider summaries (children and sharing providers included) the
// least over the classes asked of int(free / requested), summed.
func osCapacity(a *api, f novaclient.Flavor) (int64, map[string]int64) {
	res, query := osCapacityRequest(f)
	var ans answer
	a.decode(a.must("GET", "/allocation_candidates?"+query, "1.29", nil, 200), &ans)
	per := map[string]int64{}
	var total int64
	for rp, sum := range ans.ProviderSummaries {
		least := int64(-1)
		for class, amounts := range sum.Resources {
			if req := res[class]; req != 0 {
				if n := (amounts.Capacity - amounts.Used) / req; least < 0 || n < least {
					least = n
				}
			}
		}
		if least >= 0 {
			per[rp] = least
			total += least
		}
	}
	return total, per
}

// comparisonCloud has what os-capacity's formula gets wrong: a NUMA host
// (CPUs and memory on two children), a host whose disk max_unit is
// below a flavor's disk, two hosts on one shared storage provider; and a
// flat host where both agree.
func comparisonCloud() *cloud {
	u := func(n int) string { return fmt.Sprintf("d0000000-0000-4000-8000-%012d", n) }
	numaNode := func(n int, name string) prov {
		return prov{uuid: u(n), name: name, parent: u(2), invs: []inv{unit("VCPU", 8), unit("MEMORY_MB", 16384), unit("PCPU", 4)}}
	}
	maxUnit := unit("DISK_GB", 400)
	maxUnit.maxUnit = 30
	return &cloud{provs: []prov{
		{uuid: u(1), name: "flat", invs: []inv{unit("VCPU", 16), unit("MEMORY_MB", 32768), unit("DISK_GB", 200)}},
		{uuid: u(2), name: "numa", invs: []inv{unit("DISK_GB", 200)}},
		numaNode(3, "numa_NUMA0"), numaNode(4, "numa_NUMA1"),
		{uuid: u(5), name: "max-unit", invs: []inv{unit("VCPU", 16), unit("MEMORY_MB", 32768), maxUnit}},
		{uuid: u(6), name: "on-shared-1", invs: []inv{unit("VCPU", 16), unit("MEMORY_MB", 32768)}, aggs: []string{"agg-storage-0"}},
		{uuid: u(7), name: "on-shared-2", invs: []inv{unit("VCPU", 16), unit("MEMORY_MB", 32768)}, aggs: []string{"agg-storage-0"}},
		{uuid: u(8), name: "storage", invs: []inv{unit("DISK_GB", 300)}, traits: []string{"MISC_SHARES_VIA_AGGREGATE"}, aggs: []string{"agg-storage-0"}},
	}}
}

func comparisonFlavors() []novaclient.Flavor {
	f := func(name string, vcpus, ram, disk int64, specs map[string]string) novaclient.Flavor {
		return novaclient.Flavor{ID: name, Name: name, VCPUs: vcpus, RAM: ram, Disk: disk, Public: true, ExtraSpecs: specs}
	}
	return []novaclient.Flavor{
		f("m1.small", 1, 2048, 20, nil),
		f("m1.large", 4, 8192, 40, nil),
		f("m1.xlarge", 8, 16384, 20, nil),
		f("pinned", 2, 4096, 20, map[string]string{"hw:cpu_policy": "dedicated"}),
		f("numa-split", 4, 8192, 20, map[string]string{"resources1:VCPU": "2", "resources1:MEMORY_MB": "4096",
			"resources2:VCPU": "2", "resources2:MEMORY_MB": "4096", "group_policy": "isolate"}),
	}
}

// TestOsCapacityComparison puts os-capacity's method, the exact count
// and the brute force side by side, flavor by flavor, on one cloud served
// by our API, and prints the table docs/capacity.md shows.
func TestOsCapacityComparison(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	a := newAPI(t, srv.URL, srv.Token)
	c := comparisonCloud()
	a.create(c)
	snap, err := srv.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	flavors := comparisonFlavors()
	results := flavorreq.TranslateAll(flavors, flavorreq.Options{})
	rep := count.Count(count.Input{Snapshot: snap, Flavors: results, DefaultZone: "nova"})
	names := c.names()
	lines := []string{"| flavor | os-capacity | exact count | brute force | os-capacity per provider | exact per host |", "|---|---:|---:|---:|---|---|"}
	differs := 0
	for k, f := range flavors {
		osc, oscPer := osCapacity(a, f)
		brute, _ := a.bruteForce(c, results[k].Request.Query(0))
		var bruteCloud int64
		for _, n := range brute {
			bruteCloud += n
		}
		exact := rep.Flavors[k]
		got := map[string]int64{}
		for _, h := range exact.Hosts {
			got[h.UUID] = h.Count
		}
		for u, n := range brute {
			if got[u] != n {
				t.Errorf("%s on %s: exact %d, brute force %d", f.Name, names[u], got[u], n)
			}
		}
		if exact.Cloud != bruteCloud {
			t.Errorf("%s: exact %d, brute force %d", f.Name, exact.Cloud, bruteCloud)
		}
		if osc != exact.Cloud {
			differs++
		}
		lines = append(lines, fmt.Sprintf("| %s | %d | %d | %d | %s | %s |", f.Name, osc, exact.Cloud, bruteCloud, perName(oscPer, names), perName(got, names)))
	}
	t.Logf("os-capacity's method, the exact count and the brute force on one cloud:\n%s", joinLines(lines))
	if differs < 3 {
		t.Errorf("os-capacity's method agrees with the exact count on %d of %d flavors; the cloud should show where it errs", len(flavors)-differs, len(flavors))
	}
}

// perName renders counts by provider name, sorted, zeros left out.
func perName(per map[string]int64, names map[string]string) string {
	var parts []string
	for u, n := range per {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", names[u], n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
