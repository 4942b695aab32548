package difftest

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// rpPath is /resource_providers/{u} plus a suffix.
func rpPath(u, suffix string) string { return "/resource_providers/" + u + suffix }

func kUpdateRP(g *Generator) []builder {
	return []builder{func() *Request {
		p := g.rp()
		if p == nil {
			return nil
		}
		mv := g.mv(0)
		body := map[string]any{"name": g.name("renamed")}
		note := ""
		if mv >= 14 && g.chance(0.6) {
			// Keep the parent (always allowed), or move the provider
			// (allowed from 1.37), or try to un-parent it.
			switch g.intn(3) {
			case 0:
				if p.Parent != "" {
					body["parent_provider_uuid"] = p.Parent
				}
				note = "set/keep parent"
			case 1:
				if q := g.rp(); q != nil {
					body["parent_provider_uuid"] = q.UUID
				}
				note = "re-parent"
			default:
				body["parent_provider_uuid"] = nil
				note = "un-parent"
			}
		}
		r := req("update_rp", "PUT", rpPath(p.UUID, ""), mv, body)
		r.Note = note
		u := p.UUID
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.m.learnProvider(a.Body)
				g.queue = append([]builder{g.syncRP(u)}, g.queue...)
			}
		}
		return r
	}}
}

func kDeleteRP(g *Generator) []builder {
	return []builder{func() *Request {
		u := g.rpOrRandom()
		r := req("delete_rp", "DELETE", rpPath(u, ""), g.mv(0), nil)
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.m.dropProvider(u)
			}
		}
		return r
	}}
}

func kGetRP(g *Generator) []builder {
	return once(req("get_rp", "GET", rpPath(g.rpOrRandom(), ""), g.mv(0), nil))
}

// kListRPs lists providers with the filters of the microversion picked.
func kListRPs(g *Generator) []builder {
	mv := g.mv(0)
	var kv []string
	add := func(from int, p float64, k, v string) {
		if mv >= from && g.chance(p) {
			kv = append(kv, k, v)
		}
	}
	if p := g.rp(); p != nil {
		add(0, 0.1, "name", p.Name)
		add(0, 0.15, "uuid", g.uuidForm(p.UUID))
		add(14, 0.25, "in_tree", g.uuidForm(p.UUID))
	}
	add(3, 0.2, "member_of", g.memberOf(mv))
	add(4, 0.3, "resources", g.resourcesParam(false))
	add(18, 0.2, "required", g.requiredParam(mv))
	if g.chance(0.05) {
		kv = append(kv, "foo", "bar")
	}
	path := "/resource_providers"
	if q := query(kv...); q != "" {
		path += "?" + q
	}
	return once(req("list_rps", "GET", path, mv, nil))
}

// uuidForm is u as written, or now and then (when the generator chose u)
// in another spelling that oslo's is_uuid_like accepts: 8.0.0 takes them
// all in GET /resource_providers, 15.0.0 only the dashed ones.
func (g *Generator) uuidForm(u string) string {
	if !g.made[u] || !g.chance(0.4) {
		return u
	}
	return pick(g, []string{strings.ReplaceAll(u, "-", ""), strings.ToUpper(u), "{" + u + "}", "urn:uuid:" + u})
}

// memberOf is a member_of value: one aggregate, in: a list, or (1.32+)
// a forbidden !in: list.
func (g *Generator) memberOf(mv int) string {
	switch g.intn(4) {
	case 0:
		return "in:" + strings.Join(some(g, g.aggs, 3, true), ",")
	case 1:
		if mv >= 32 {
			return "!" + pick(g, g.aggs)
		}
	case 2:
		if mv >= 32 {
			return "!in:" + strings.Join(some(g, g.aggs, 2, true), ",")
		}
	}
	return pick(g, g.aggs)
}

// requiredParam is a required value: traits, forbidden ones (1.22+) and
// any-of in: lists (1.39+).
func (g *Generator) requiredParam(mv int) string { return g.requiredFrom(mv, g.traitPool()) }

// requiredFrom is a required value over the traits of pool.
func (g *Generator) requiredFrom(mv int, pool []string) string {
	if len(pool) == 0 {
		pool = g.traitPool()
	}
	var parts []string
	for _, t := range some(g, pool, 2, true) {
		if mv >= 22 && g.chance(0.3) {
			t = "!" + t
		}
		parts = append(parts, t)
	}
	if mv >= 39 && g.chance(0.3) {
		return "in:" + strings.Join(some(g, pool, 3, true), ",")
	}
	return strings.Join(parts, ",")
}

// resourcesParam is a resources value over classes the model's providers
// have, with small amounts (big ones when big).
func (g *Generator) resourcesParam(big bool) string {
	var parts []string
	classes := g.inventoryClasses()
	if len(classes) == 0 {
		classes = stdClasses[:3]
	}
	for _, rc := range some(g, classes, 2, true) {
		n := pick(g, []int{1, 1, 2, 4, 16, 512})
		if big {
			n = pick(g, []int{100000, 2147483647})
		}
		parts = append(parts, rc+":"+strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

// inventoryClasses lists the classes any provider has inventory of.
func (g *Generator) inventoryClasses() []string {
	seen := map[string]bool{}
	for _, p := range g.m.providers() {
		for rc := range p.Inv {
			seen[rc] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func kInventories(g *Generator) []builder {
	p := g.rp()
	if p == nil {
		return kScenario(g)
	}
	u := p.UUID
	switch g.intn(8) {
	case 0:
		return []builder{g.putInventories("put_invs", u, g.keepInventories(p))}
	case 1:
		return []builder{g.putInventories("put_invs", u, g.invBody())}
	case 2:
		return once(req("get_invs", "GET", rpPath(u, "/inventories"), g.mv(0), nil))
	case 3:
		return once(req("get_inv", "GET", rpPath(u, "/inventories/"+pick(g, g.classes())), g.mv(0), nil))
	case 4:
		return []builder{g.postInventory(p)}
	case 5:
		return []builder{g.putInventory(p)}
	case 6:
		return []builder{g.deleteInventory(p)}
	}
	r := req("del_invs", "DELETE", rpPath(u, "/inventories"), g.mv(0), nil)
	r.observe = func(a *Answer) {
		if a.Status == 204 {
			g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
		}
	}
	return once(r)
}

// syncInventories reads a provider's inventories and generation back.
func (g *Generator) syncInventories(u string) builder {
	return func() *Request {
		r := req("sync-rp", "GET", rpPath(u, "/inventories"), g.mvAtLeast(0), nil)
		r.observe = func(a *Answer) { g.m.learnInventories(u, a.Body) }
		return r
	}
}

func (g *Generator) postInventory(p *provider) builder {
	return func() *Request {
		rc := pick(g, g.classes())
		body := g.randomInventory(rc)
		body["resource_class"] = rc
		body["resource_provider_generation"] = p.Gen
		r := req("post_inv", "POST", rpPath(p.UUID, "/inventories"), g.mv(0), body)
		u := p.UUID
		r.observe = func(a *Answer) {
			if a.Status == 201 {
				g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
			}
		}
		return r
	}
}

func (g *Generator) putInventory(p *provider) builder {
	return func() *Request {
		rc := pick(g, g.classes())
		if len(p.Inv) > 0 && g.chance(0.8) {
			rc = pick(g, slices.Sorted(maps.Keys(p.Inv)))
		}
		body := g.randomInventory(rc)
		body["resource_provider_generation"] = p.Gen
		r := req("put_inv", "PUT", rpPath(p.UUID, "/inventories/"+rc), g.mv(0), body)
		u := p.UUID
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
			}
		}
		return r
	}
}

func (g *Generator) deleteInventory(p *provider) builder {
	return func() *Request {
		rc := pick(g, g.classes())
		if len(p.Inv) > 0 && g.chance(0.8) {
			rc = pick(g, slices.Sorted(maps.Keys(p.Inv)))
		}
		r := req("del_inv", "DELETE", rpPath(p.UUID, "/inventories/"+rc), g.mv(0), nil)
		u := p.UUID
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
			}
		}
		return r
	}
}

func kRPTraits(g *Generator) []builder {
	p := g.rp()
	if p == nil {
		return kScenario(g)
	}
	u := p.UUID
	switch g.intn(4) {
	case 0:
		return once(req("get_rp_traits", "GET", rpPath(u, "/traits"), g.mv(6), nil))
	case 1:
		r := req("del_rp_traits", "DELETE", rpPath(u, "/traits"), g.mv(6), nil)
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.queue = append([]builder{g.syncRP(u)}, g.queue...)
			}
		}
		return once(r)
	}
	traits := some(g, g.traitPool(), 3, false)
	if g.chance(0.2) {
		traits = append(traits, sharesTrait)
	}
	return []builder{g.putTraits("put_rp_traits", u, traits)}
}

func kAggregates(g *Generator) []builder {
	p := g.rp()
	if p == nil {
		return kScenario(g)
	}
	if g.chance(0.4) {
		return once(req("get_aggs", "GET", rpPath(p.UUID, "/aggregates"), g.mv(1), nil))
	}
	return []builder{g.putAggregates("put_aggs", p.UUID, some(g, g.aggs, 3, false))}
}

func kUsages(g *Generator) []builder {
	if g.chance(0.4) {
		return once(req("rp_usages", "GET", rpPath(g.rpOrRandom(), "/usages"), g.mv(0), nil))
	}
	mv := g.mv(9)
	kv := []string{"project_id", pick(g, projects)}
	if g.chance(0.4) {
		kv = append(kv, "user_id", pick(g, users))
	}
	if mv >= 38 && g.chance(0.4) {
		kv = append(kv, "consumer_type", pick(g, append([]string{"all", "unknown"}, consTypes...)))
	}
	if g.chance(0.05) {
		kv = kv[2:]
	}
	return once(req("usages", "GET", "/usages?"+query(kv...), mv, nil))
}
