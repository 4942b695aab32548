package count_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// fleet is a production-like cloud of n hosts: flat computes with VCPU,
// MEMORY_MB and DISK_GB in use, one in twenty a NUMA host (two NUMA
// children with VCPU, PCPU and memory), one in fifty held back, one in
// a hundred disabled, in 10 availability zones.
func fleet(n int) (*cloud, map[string]count.Aggregate) {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	g := &gen{r: r}
	zones := map[string]count.Aggregate{}
	for z := 0; z < 10; z++ {
		zones[fmt.Sprint("az-", z)] = count.Aggregate{Name: fmt.Sprint("az-", z), Zone: fmt.Sprint("zone-", z)}
	}
	cpu := func(class string, total int64, ratio float64) inv {
		return inv{class: class, total: total, minUnit: 1, maxUnit: total, step: 1, ratio: ratio}
	}
	for i := 0; i < n; i++ {
		mem := inv{class: "MEMORY_MB", total: 1024 * (128 + 128*int64(r.IntN(4))), reserved: 4096, minUnit: 1, step: 1, ratio: 1}
		mem.maxUnit = mem.total
		disk := inv{class: "DISK_GB", total: 1000 * (1 + int64(r.IntN(4))), minUnit: 1, step: 1, ratio: 1}
		disk.maxUnit = disk.total
		var p *prov
		if i%20 == 19 {
			p = g.add("", "numa", []inv{disk})
			ru := p.uuid
			p.aggs = []string{fmt.Sprint("az-", i%10)}
			for k := 0; k < 2; k++ {
				half := mem
				half.total, half.maxUnit, half.reserved = mem.total/2, mem.total/2, 2048
				node := g.add(ru, "numa-node", []inv{cpu("VCPU", 32, 4), half, cpu("PCPU", 16, 1)})
				g.usage(node)
				oneClaim(node)
			}
			continue
		}
		p = g.add("", "compute", []inv{cpu("VCPU", 32+32*int64(r.IntN(3)), 4), mem, disk})
		p.aggs = []string{fmt.Sprint("az-", i%10)}
		if i%100 == 7 {
			p.traits = []string{"COMPUTE_STATUS_DISABLED"}
		}
		if i%7 == 0 {
			p.traits = append(p.traits, "HW_CPU_X86_AVX2")
		}
		g.usage(p)
		oneClaim(p)
		if i%50 == 3 {
			p.invs[0].reserved, p.invs[0].used = p.invs[0].total, 0
			p.heldFor = "maintenance"
		}
	}
	return &g.c, zones
}

// oneClaim keeps p's usage within max_unit, so that one consumer can
// hold it all when the fleet is built through the API.
func oneClaim(p *prov) {
	for k := range p.invs {
		p.invs[k].used = min(p.invs[k].used, p.invs[k].maxUnit)
	}
}

// fleetFlavors are 50 flavors: sizes from 1 vCPU / 1 GB to 32 vCPUs /
// 256 GB, some pinned, some asking or forbidding a trait, some split in
// granular groups.
func fleetFlavors() []flavorreq.Result {
	var fs []novaclient.Flavor
	for i := 0; i < 50; i++ {
		vcpus := int64(1) << (i % 6)
		f := novaclient.Flavor{ID: fmt.Sprint("f", i), Name: fmt.Sprint("flavor-", i), VCPUs: vcpus, RAM: 1024 * vcpus * int64(1+i%4), Disk: 10 * int64(1+i%5), Public: true}
		switch i % 10 {
		case 3:
			f.ExtraSpecs = map[string]string{"hw:cpu_policy": "dedicated"}
		case 5:
			f.ExtraSpecs = map[string]string{"trait:HW_CPU_X86_AVX2": "required"}
		case 8:
			f.ExtraSpecs = map[string]string{"resources1:VCPU": "1", "resources1:MEMORY_MB": "1024", "resources2:VCPU": "1",
				"resources2:MEMORY_MB": "1024", "group_policy": "isolate"}
		}
		fs = append(fs, f)
	}
	return flavorreq.TranslateAll(fs, flavorreq.Options{})
}

func BenchmarkCount(b *testing.B) {
	flavors := fleetFlavors()
	for _, n := range []int{1000, 10000, 100000} {
		c, aggs := fleet(n)
		snap := c.snapshot()
		for _, noHosts := range []bool{false, true} {
			in := count.Input{Snapshot: snap, Flavors: flavors, Aggregates: aggs, DefaultZone: "nova", HeldBack: c.reasons(), NoHosts: noHosts}
			b.Run(fmt.Sprintf("hosts=%d/list=%v", n, !noHosts), func(b *testing.B) {
				b.ReportAllocs()
				before := cpuTime(b)
				for range b.N {
					count.Count(in)
				}
				// On a shared machine the wall clock counts other processes'
				// time; the process's CPU time (GC included) does not.
				b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCountSharedStorage counts the 50 flavors on hosts whose disk
// is on shared storage (ten sharing providers, each the disk of a zone's
// hosts), where the engine counts every host in root order.
func BenchmarkCountSharedStorage(b *testing.B) {
	flavors := fleetFlavors()
	for _, n := range []int{1000, 10000} {
		c, aggs := fleet(n)
		g := &gen{r: rand.New(rand.NewPCG(2, 2)), n: len(c.provs), c: *c}
		for i := range g.c.provs {
			p := &g.c.provs[i]
			if p.parent == "" && len(p.invs) > 0 && p.invs[len(p.invs)-1].class == "DISK_GB" {
				p.invs = p.invs[:len(p.invs)-1]
			}
		}
		for z := 0; z < 10; z++ {
			p := g.add("", "storage", []inv{{class: "DISK_GB", total: 1 << 20, minUnit: 1, maxUnit: 1 << 20, step: 1, ratio: 1}})
			p.traits = []string{"MISC_SHARES_VIA_AGGREGATE"}
			p.aggs = []string{fmt.Sprint("az-", z)}
		}
		snap := g.c.snapshot()
		in := count.Input{Snapshot: snap, Flavors: flavors, Aggregates: aggs, DefaultZone: "nova", HeldBack: g.c.reasons(), NoHosts: true}
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			before := cpuTime(b)
			for range b.N {
				count.Count(in)
			}
			b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
