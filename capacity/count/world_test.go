package count_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// A cloud for the count's tests, spelled so that it can be built in
// memory (snapshot) or through Placement's API (create).

// inv is one inventory with the usage it starts with.
type inv struct {
	class                  string
	total, reserved        int64
	minUnit, maxUnit, step int64
	ratio                  float64
	used                   int64
}

// prov is one provider; providers are created in order, parents first.
type prov struct {
	uuid, name, parent string
	invs               []inv
	traits             []string
	aggs               []string
	// heldFor is the agent's reason for an inventory held back, "" when
	// it gave none.
	heldFor string
}

func (p *prov) sharing() bool {
	for _, t := range p.traits {
		if t == "MISC_SHARES_VIA_AGGREGATE" {
			return true
		}
	}
	return false
}

// cloud is a world: its providers and the agent's held-back reasons.
type cloud struct {
	provs []prov
}

func (c *cloud) reasons() map[string]string {
	out := map[string]string{}
	for _, p := range c.provs {
		if p.heldFor != "" {
			out[p.uuid] = p.heldFor
		}
	}
	return out
}

// rootOf returns each provider's root uuid, by uuid.
func (c *cloud) rootOf() map[string]string {
	out := map[string]string{}
	for _, p := range c.provs {
		if p.parent == "" {
			out[p.uuid] = p.uuid
		} else {
			out[p.uuid] = out[p.parent]
		}
	}
	return out
}

// snapshot builds the cloud in memory, as the store would.
func (c *cloud) snapshot() *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(1, len(c.provs))
	index := map[string]int32{}
	for i, p := range c.provs {
		index[p.uuid] = int32(i)
		sp := readmodel.SnapProvider{UUID: p.uuid, Name: p.name}
		var st readmodel.ProviderState
		for _, x := range p.invs {
			st.Inventories = append(st.Inventories, readmodel.SnapInventory{Class: b.Class(x.class), Total: x.total,
				Reserved: x.reserved, MinUnit: x.minUnit, MaxUnit: x.maxUnit, StepSize: x.step, AllocationRatio: x.ratio,
				Used: x.used, Capacity: int64(float64(x.total-x.reserved) * x.ratio)})
		}
		for _, t := range p.traits {
			sp.Traits = append(sp.Traits, b.Trait(t))
		}
		for _, a := range p.aggs {
			sp.Aggregates = append(sp.Aggregates, b.Aggregate(a))
		}
		b.AddProvider(sp, st)
	}
	for _, t := range []string{"COMPUTE_STATUS_DISABLED", "HW_CPU_X86_AVX2", "CUSTOM_GOLD", "HW_CPU_HYPERTHREADING"} {
		b.Trait(t)
	}
	for _, k := range []string{"VCPU", "PCPU", "MEMORY_MB", "DISK_GB", "CUSTOM_BAREMETAL_GOLD", "CUSTOM_PCI_X"} {
		b.Class(k)
	}
	return b.Finish(func(i int) int32 {
		if c.provs[i].parent == "" {
			return -1
		}
		return index[c.provs[i].parent]
	})
}

// gen draws clouds: flat computes, computes on shared storage, NUMA hosts
// (two NUMA children, some with a PCI child), bare-metal nodes and
// sharing storage providers; ratios, reserved, min/max unit and step
// size, usage, disabled hosts and inventories held back.
type gen struct {
	r *rand.Rand
	n int
	c cloud
}

func newCloud(r *rand.Rand, hosts int) *cloud {
	g := &gen{r: r}
	storage := 1 + r.IntN(2)
	for i := 0; i < hosts; i++ {
		switch k := r.IntN(10); {
		case k < 4:
			g.flat(g.disk())
		case k < 5:
			g.flat(nil)
		case k < 8:
			g.numa()
		default:
			g.baremetal()
		}
	}
	for i := 0; i < storage; i++ {
		p := g.add("", "storage", g.disk())
		p.invs[0].total, p.invs[0].maxUnit = 100+int64(r.IntN(3))*50, 100
		p.traits = append(p.traits, "MISC_SHARES_VIA_AGGREGATE")
		p.aggs = []string{fmt.Sprint("agg-storage-", i)}
	}
	return &g.c
}

func (g *gen) uuid() string {
	g.n++
	return fmt.Sprintf("c0000000-0000-4000-8000-%012d", g.n)
}

// add appends a provider and returns it (valid until the next add).
func (g *gen) add(parent, kind string, invs []inv) *prov {
	u := g.uuid()
	g.c.provs = append(g.c.provs, prov{uuid: u, name: fmt.Sprintf("%s-%d", kind, g.n), parent: parent, invs: invs})
	return &g.c.provs[len(g.c.provs)-1]
}

func (g *gen) pick(xs ...int64) int64 { return xs[g.r.IntN(len(xs))] }

func (g *gen) vcpu(class string) inv {
	total := 2 + int64(g.r.IntN(5))
	x := inv{class: class, total: total, minUnit: 1, maxUnit: total, step: 1, ratio: 1}
	if class == "VCPU" {
		x.ratio = float64(g.pick(1, 1, 2))
	}
	if g.r.IntN(4) == 0 {
		x.reserved = 1
	}
	if g.r.IntN(5) == 0 {
		x.maxUnit = 1
	}
	return x
}

func (g *gen) memory() inv {
	total := 1024 * (1 + int64(g.r.IntN(4)))
	x := inv{class: "MEMORY_MB", total: total, minUnit: 1, maxUnit: total, step: g.pick(1, 1, 256), ratio: []float64{1, 1.5}[g.r.IntN(2)]}
	if g.r.IntN(3) == 0 {
		x.reserved = 512
	}
	return x
}

func (g *gen) disk() []inv {
	total := 20 + 10*int64(g.r.IntN(8))
	x := inv{class: "DISK_GB", total: total, minUnit: g.pick(1, 1, 10), maxUnit: g.pick(total, total, 30), step: g.pick(1, 1, 5), ratio: 1}
	return []inv{x}
}

// usage puts some of each inventory in use, in amounts its units allow.
func (g *gen) usage(p *prov) {
	for k := range p.invs {
		x := &p.invs[k]
		free := int64(float64(x.total-x.reserved)*x.ratio) / 2
		if free <= 0 || g.r.IntN(2) == 0 {
			continue
		}
		x.used = int64(g.r.IntN(int(free) + 1))
	}
}

// holdBack may hold one of p's inventories back, with or without the
// agent's reason.
func (g *gen) holdBack(p *prov, reasons ...string) {
	if len(p.invs) == 0 || g.r.IntN(5) != 0 {
		return
	}
	x := &p.invs[g.r.IntN(len(p.invs))]
	x.reserved, x.used = x.total, 0
	p.heldFor = reasons[g.r.IntN(len(reasons))]
}

func (g *gen) hostTraits(p *prov) {
	if g.r.IntN(3) == 0 {
		p.traits = append(p.traits, "HW_CPU_X86_AVX2")
	}
	if g.r.IntN(4) == 0 {
		p.traits = append(p.traits, "CUSTOM_GOLD")
	}
	if g.r.IntN(8) == 0 {
		p.traits = append(p.traits, "COMPUTE_STATUS_DISABLED")
	}
}

// flat is a compute node of one provider; without disk, it is in a
// shared storage aggregate.
func (g *gen) flat(disk []inv) {
	p := g.add("", "compute", append([]inv{g.vcpu("VCPU"), g.memory()}, disk...))
	if disk == nil || g.r.IntN(4) == 0 {
		p.aggs = []string{"agg-storage-0"}
	}
	g.hostTraits(p)
	g.usage(p)
	g.holdBack(p, "", "maintenance")
}

// numa is a compute node whose CPUs and memory are on two NUMA children.
func (g *gen) numa() {
	var disk []inv
	if g.r.IntN(3) != 0 {
		disk = g.disk()
	}
	root := g.add("", "numa", disk)
	if disk == nil || g.r.IntN(3) == 0 {
		root.aggs = []string{"agg-storage-0"}
	}
	g.hostTraits(root)
	g.usage(root)
	ru := root.uuid
	for n := 0; n < 2; n++ {
		invs := []inv{g.vcpu("VCPU"), g.memory()}
		if g.r.IntN(2) == 0 {
			invs = append(invs, g.vcpu("PCPU"))
		}
		node := g.add(ru, "numa-node", invs)
		if g.r.IntN(2) == 0 {
			node.traits = []string{"HW_CPU_HYPERTHREADING"}
		}
		g.usage(node)
		g.holdBack(node, "", "programming")
		if n == 0 && g.r.IntN(2) == 0 {
			nu := node.uuid
			pci := g.add(nu, "pci", []inv{{class: "CUSTOM_PCI_X", total: 1 + int64(g.r.IntN(2)), minUnit: 1, maxUnit: 1, step: 1, ratio: 1}})
			if g.r.IntN(2) == 0 {
				pci.traits = []string{"CUSTOM_GOLD"}
			}
		}
	}
}

// baremetal is an Ironic node: one unit of its custom class.
func (g *gen) baremetal() {
	p := g.add("", "node", []inv{{class: "CUSTOM_BAREMETAL_GOLD", total: 1, minUnit: 1, maxUnit: 1, step: 1, ratio: 1}})
	switch g.r.IntN(4) {
	case 0:
		p.invs[0].used = 1
	case 1:
		p.invs[0].reserved = 1
		p.heldFor = g.pick2("cleaning", "maintenance", "")
	}
}

func (g *gen) pick2(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// testFlavors are the flavors the count's tests ask about: plain,
// traits, CPU pinning, granular groups with each policy, a PCI device,
// bare metal, a disk over some max_unit.
func testFlavors() []novaclient.Flavor {
	f := func(name string, vcpus, ram, disk int64, specs map[string]string) novaclient.Flavor {
		return novaclient.Flavor{ID: name, Name: name, VCPUs: vcpus, RAM: ram, Disk: disk, Public: true, ExtraSpecs: specs}
	}
	return []novaclient.Flavor{
		f("m1.small", 1, 512, 10, nil),
		f("m1.medium", 2, 1024, 20, nil),
		f("avx2", 1, 512, 10, map[string]string{"trait:HW_CPU_X86_AVX2": "required"}),
		f("not-gold", 1, 1024, 10, map[string]string{"trait:CUSTOM_GOLD": "forbidden"}),
		f("pinned", 2, 1024, 10, map[string]string{"hw:cpu_policy": "dedicated"}),
		f("split-isolate", 2, 1024, 10, map[string]string{"resources1:VCPU": "1", "resources1:MEMORY_MB": "512",
			"resources2:VCPU": "1", "resources2:MEMORY_MB": "512", "group_policy": "isolate"}),
		f("split-none", 2, 1024, 10, map[string]string{"resources1:VCPU": "1", "resources1:MEMORY_MB": "512",
			"resources2:VCPU": "1", "resources2:MEMORY_MB": "512", "group_policy": "none"}),
		f("split-isolate-diskless", 2, 1024, 0, map[string]string{"resources1:VCPU": "1", "resources1:MEMORY_MB": "512",
			"resources2:VCPU": "1", "resources2:MEMORY_MB": "512", "group_policy": "isolate"}),
		f("pci", 1, 512, 10, map[string]string{"resources1:CUSTOM_PCI_X": "1", "trait1:CUSTOM_GOLD": "required"}),
		f("baremetal", 1, 1024, 10, map[string]string{"resources:CUSTOM_BAREMETAL_GOLD": "1",
			"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}),
		f("big-disk", 1, 512, 40, nil),
	}
}
