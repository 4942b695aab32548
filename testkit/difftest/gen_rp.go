package difftest

import (
	"maps"
	"slices"
)

var (
	stdClasses = []string{"VCPU", "MEMORY_MB", "DISK_GB", "PCPU", "VGPU", "SRIOV_NET_VF",
		"NET_BW_EGR_KILOBIT_PER_SEC", "IPV4_ADDRESS"}
	customClasses = []string{"CUSTOM_GOLD", "CUSTOM_FPGA_A", "CUSTOM_MAGIC", "CUSTOM_X_1"}
	stdTraits     = []string{"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42", "STORAGE_DISK_SSD", "HW_NIC_SRIOV",
		"COMPUTE_STATUS_DISABLED", "HW_NUMA_ROOT", "HW_GPU_API_VULKAN", "COMPUTE_VOLUME_MULTI_ATTACH"}
	customTraits = []string{"CUSTOM_RACK_A", "CUSTOM_RACK_B", "CUSTOM_FAST", "CUSTOM_T_1"}
	projects     = []string{"proj-a", "proj-b", "11111111-2222-3333-4444-555555555555"}
	users        = []string{"user-1", "user-2", "user-中"}
	consTypes    = []string{"INSTANCE", "MIGRATION", "CUSTOM_BATCH"}
)

const sharesTrait = "MISC_SHARES_VIA_AGGREGATE"

// classes are the classes a generated inventory may use: standard ones and
// the custom ones that exist.
func (g *Generator) classes() []string { return append(slices.Clone(stdClasses), g.m.classes...) }

// traitPool is standard traits and the custom ones that exist.
func (g *Generator) traitPool() []string { return append(slices.Clone(stdTraits), g.m.traits...) }

// createRP posts a provider: with or without a uuid, sometimes under a
// parent (1.14+).
func (g *Generator) createRP(gen string, mv int, name, parent, u string) *Request {
	body := map[string]any{"name": name}
	withUUID := u != ""
	if withUUID {
		body["uuid"] = u
	}
	if parent != "" {
		body["parent_provider_uuid"] = parent
	}
	r := req(gen, "POST", "/resource_providers", mv, body)
	if !withUUID {
		r.Note = "no uuid in body"
	}
	r.observe = func(a *Answer) {
		if a.Status != 200 && a.Status != 201 {
			return
		}
		if u == "" {
			u = uuidFromLocation(a.Header.Get("Location"))
		}
		p := &provider{UUID: u, Name: name}
		if par := g.m.rps[parent]; par != nil && parent != "" {
			p.Parent, p.Root = parent, par.Root
		}
		g.m.addProvider(p)
		g.m.learnProvider(a.Body)
	}
	return r
}

func kCreateRP(g *Generator) []builder {
	mv := g.mv(0)
	parent := ""
	if p := g.rp(); p != nil && mv >= 14 && g.chance(0.5) {
		parent = p.UUID
	}
	name := g.name("rp")
	switch g.intn(8) {
	case 0:
		name = "rp with spaces/and \"quotes\" " + name
	case 1:
		name = "节点-" + name
	}
	u := ""
	if g.chance(0.9) {
		u = g.uuid()
	}
	return once(g.createRP("create_rp", mv, name, parent, u))
}

// putInventories replaces a provider's inventories at its current
// generation.
func (g *Generator) putInventories(gen, u string, invs map[string]any) builder {
	return func() *Request {
		p := g.m.rps[u]
		if p == nil {
			return nil
		}
		r := req(gen, "PUT", "/resource_providers/"+u+"/inventories", g.mv(0),
			map[string]any{"resource_provider_generation": p.Gen, "inventories": invs})
		r.observe = func(a *Answer) { g.m.learnInventories(u, a.Body) }
		return r
	}
}

// putTraits replaces a provider's traits (1.6+).
func (g *Generator) putTraits(gen, u string, traits []string) builder {
	return func() *Request {
		p := g.m.rps[u]
		if p == nil {
			return nil
		}
		r := req(gen, "PUT", "/resource_providers/"+u+"/traits", g.mvAtLeast(6),
			map[string]any{"resource_provider_generation": p.Gen, "traits": traits})
		r.observe = func(a *Answer) { g.m.learnGeneration(u, a.Body) }
		return r
	}
}

// putAggregates replaces a provider's aggregates: a bare list before 1.19,
// with the generation from 1.19.
func (g *Generator) putAggregates(gen, u string, aggs []string) builder {
	return func() *Request {
		p := g.m.rps[u]
		if p == nil {
			return nil
		}
		mv := g.mvAtLeast(1)
		var body any = aggs
		if aggs == nil {
			body = []string{}
		}
		if mv >= 19 {
			body = map[string]any{"aggregates": body, "resource_provider_generation": p.Gen}
		}
		r := req(gen, "PUT", "/resource_providers/"+u+"/aggregates", mv, body)
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.m.learnGeneration(u, a.Body)
				if mv < 19 {
					p.Aggs = aggs
					g.queue = append([]builder{g.syncRP(u)}, g.queue...)
				}
			}
		}
		return r
	}
}

// syncRP reads a provider back (1.14+ for its tree) to learn its
// generation after writes that change it without saying so.
func (g *Generator) syncRP(u string) builder {
	return func() *Request {
		r := req("sync-rp", "GET", "/resource_providers/"+u, g.mvAtLeast(14), nil)
		r.observe = func(a *Answer) {
			switch a.Status {
			case 200:
				g.m.learnProvider(a.Body)
			case 404:
				g.m.dropProvider(u)
			}
		}
		return r
	}
}

// randomInventory is a valid inventory record of class rc.
func (g *Generator) randomInventory(rc string) map[string]any {
	total := pick(g, []int{1, 2, 4, 8, 16, 64, 1024, 4096})
	inv := map[string]any{"total": total}
	if g.chance(0.3) {
		inv["reserved"] = g.intn(total/2 + 1)
	}
	if g.chance(0.3) {
		inv["allocation_ratio"] = pick(g, []any{1, 1.0, 1.5, 2, 4.0, 16.0, 0.5})
	}
	if g.chance(0.2) {
		inv["max_unit"] = total
	}
	if g.chance(0.15) {
		inv["step_size"] = pick(g, []int{1, 2})
	}
	if g.chance(0.1) {
		inv["min_unit"] = 1
	}
	return inv
}

// kScenario builds a compute node tree: a root, NUMA children, perhaps
// a grandchild, traits, aggregates and perhaps a sharing provider in one
// of the root's aggregates.
func kScenario(g *Generator) []builder {
	root := g.uuid()
	agg := pick(g, g.aggs)
	name := g.name("cn")
	bs := []builder{func() *Request { return g.createRP("scenario", g.mvAtLeast(0), name, "", root) }}
	bs = append(bs, g.putInventories("scenario", root, map[string]any{
		"VCPU": g.randomInventory("VCPU"), "MEMORY_MB": g.randomInventory("MEMORY_MB")}))
	bs = append(bs, g.putTraits("scenario", root, some(g, g.traitPool(), 2, false)))
	bs = append(bs, g.putAggregates("scenario", root, append([]string{agg}, some(g, g.aggs, 1, false)...)))
	for range g.intn(3) {
		bs = append(bs, g.childSteps(root, []string{"VCPU", "MEMORY_MB", "VGPU", "SRIOV_NET_VF"})...)
	}
	if g.chance(0.5) {
		bs = append(bs, g.sharingSteps(agg)...)
	}
	return bs
}

// childSteps adds a child under parent with inventories and traits, and
// perhaps a grandchild.
func (g *Generator) childSteps(parent string, classes []string) []builder {
	child, name := g.uuid(), g.name("numa")
	bs := []builder{func() *Request {
		if g.m.rps[parent] == nil {
			return nil
		}
		return g.createRP("scenario", g.mvAtLeast(14), name, parent, child)
	}}
	invs := map[string]any{}
	for _, rc := range some(g, classes, 2, true) {
		invs[rc] = g.randomInventory(rc)
	}
	bs = append(bs, g.putInventories("scenario", child, invs), g.putTraits("scenario", child, some(g, g.traitPool(), 2, true)))
	if g.chance(0.3) {
		gc, gname := g.uuid(), g.name("pf")
		bs = append(bs, func() *Request {
			if g.m.rps[child] == nil {
				return nil
			}
			return g.createRP("scenario", g.mvAtLeast(14), gname, child, gc)
		}, g.putInventories("scenario", gc, map[string]any{
			"SRIOV_NET_VF":               g.randomInventory("SRIOV_NET_VF"),
			"NET_BW_EGR_KILOBIT_PER_SEC": g.randomInventory("NET_BW_EGR_KILOBIT_PER_SEC")}),
			g.putTraits("scenario", gc, []string{"HW_NIC_SRIOV"}))
	}
	return bs
}

// sharingSteps adds a sharing provider of DISK_GB or IPV4_ADDRESS in agg.
func (g *Generator) sharingSteps(agg string) []builder {
	ss, name := g.uuid(), g.name("ss")
	rc := pick(g, []string{"DISK_GB", "IPV4_ADDRESS", "DISK_GB"})
	return []builder{
		func() *Request { return g.createRP("scenario", g.mvAtLeast(0), name, "", ss) },
		g.putInventories("scenario", ss, map[string]any{rc: g.randomInventory(rc)}),
		g.putTraits("scenario", ss, append([]string{sharesTrait}, some(g, g.traitPool(), 1, false)...)),
		g.putAggregates("scenario", ss, []string{agg}),
	}
}

// invBody is a random set of inventories over existing and standard
// classes.
func (g *Generator) invBody() map[string]any {
	invs := map[string]any{}
	for _, rc := range some(g, g.classes(), 3, false) {
		invs[rc] = g.randomInventory(rc)
	}
	return invs
}

// keepInventories is p's inventories as a PUT body, with one changed.
func (g *Generator) keepInventories(p *provider) map[string]any {
	invs := map[string]any{}
	for _, rc := range slices.Sorted(maps.Keys(p.Inv)) {
		iv := p.Inv[rc]
		invs[rc] = map[string]any{"total": iv.Total, "reserved": iv.Reserved, "min_unit": iv.MinUnit,
			"max_unit": iv.MaxUnit, "step_size": iv.StepSize, "allocation_ratio": iv.Ratio}
	}
	if len(invs) > 0 && g.chance(0.5) {
		rc := pick(g, slices.Sorted(maps.Keys(invs)))
		invs[rc] = g.randomInventory(rc)
	}
	return invs
}
