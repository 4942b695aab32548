package difftest

import (
	"maps"
	"slices"
)

// feasible picks an amount of rc on p that its inventory accepts (or,
// when big, one it does not).
func (g *Generator) feasible(p *provider, rc string, big bool) int {
	iv, ok := p.Inv[rc]
	if !ok || big {
		return pick(g, []int{1, 100000, 2147483647})
	}
	step := max(iv.StepSize, 1)
	n := max(iv.MinUnit, step)
	n = (n + step - 1) / step * step
	if g.chance(0.3) {
		free := iv.capacity() - g.m.used(p.UUID, rc)
		if free > n {
			n += g.intn(min(free-n, iv.MaxUnit-n)+1) / step * step
		}
	}
	return n
}

// allocationFor picks providers with inventory (preferring one tree and
// its sharing providers) and feasible amounts.
func (g *Generator) allocationFor() map[string]map[string]int {
	var withInv []*provider
	for _, p := range g.m.providers() {
		if len(p.Inv) > 0 {
			withInv = append(withInv, p)
		}
	}
	out := map[string]map[string]int{}
	for _, p := range some(g, withInv, 2, true) {
		res := map[string]int{}
		for _, rc := range some(g, slices.Sorted(maps.Keys(p.Inv)), 2, true) {
			res[rc] = g.feasible(p, rc, g.chance(0.05))
		}
		out[p.UUID] = res
	}
	return out
}

// allocBody is the allocations of one consumer in the shape of mv:
// a list before 1.12, a map from 1.12.
func allocBody(mv int, allocs map[string]map[string]int) any {
	if mv < 12 {
		var list []any
		for _, u := range slices.Sorted(maps.Keys(allocs)) {
			list = append(list, map[string]any{"resource_provider": map[string]any{"uuid": u}, "resources": allocs[u]})
		}
		if list == nil {
			list = []any{}
		}
		return list
	}
	m := map[string]any{}
	for u, res := range allocs {
		m[u] = map[string]any{"resources": res}
	}
	return m
}

// consumerFields adds project, user, consumer generation (1.28+) and type
// (1.38+) to a consumer's allocation body.
func (g *Generator) consumerFields(mv int, c *consumer, body map[string]any) {
	if mv >= 8 || g.chance(0.3) {
		proj, user := pick(g, projects), pick(g, users)
		if c.Project != "" && g.chance(0.8) {
			proj, user = c.Project, c.User
		}
		body["project_id"], body["user_id"] = proj, user
	}
	if mv >= 28 {
		body["consumer_generation"] = c.Gen
		if g.chance(0.05) {
			body["consumer_generation"] = 99
		}
	}
	if mv >= 38 && g.chance(0.95) {
		body["consumer_type"] = pick(g, consTypes)
	}
}

// pickConsumer is an existing consumer or a new one.
func (g *Generator) pickConsumer() *consumer {
	if len(g.m.conOrder) > 0 && g.chance(0.6) {
		return g.m.consumers[pick(g, g.m.conOrder)]
	}
	return g.m.consumerFor(g.uuid())
}

// afterAllocWrite re-reads the consumers and the providers a write
// touched: their generations changed.
func (g *Generator) afterAllocWrite(cons []string, rps []string) {
	var bs []builder
	for _, c := range cons {
		for u := range g.m.consumers[c].Allocs {
			rps = append(rps, u)
		}
		bs = append(bs, g.syncConsumer(c))
	}
	slices.Sort(rps)
	for _, u := range slices.Compact(rps) {
		if g.m.rps[u] != nil {
			bs = append(bs, g.syncRP(u))
		}
	}
	g.queue = append(bs, g.queue...)
}

func (g *Generator) syncConsumer(c string) builder {
	return func() *Request {
		r := req("sync-consumer", "GET", "/allocations/"+c, g.mvAtLeast(38), nil)
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.m.learnConsumer(c, a.Body)
			}
		}
		return r
	}
}

func kPutAllocs(g *Generator) []builder {
	return []builder{func() *Request {
		if len(g.m.rps) == 0 {
			return nil
		}
		c := g.pickConsumer()
		mv := g.mv(0)
		allocs := g.allocationFor()
		body := map[string]any{"allocations": allocBody(mv, allocs)}
		g.consumerFields(mv, c, body)
		r := req("put_allocs", "PUT", "/allocations/"+c.UUID, mv, body)
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.afterAllocWrite([]string{c.UUID}, slices.Collect(maps.Keys(allocs)))
			}
		}
		return r
	}}
}

func kPostAllocs(g *Generator) []builder {
	return []builder{func() *Request {
		mv := g.mv(13)
		body := map[string]any{}
		var cons, rps []string
		for range 1 + g.intn(2) {
			c := g.pickConsumer()
			allocs := map[string]map[string]int{}
			if len(g.m.rps) > 0 && g.chance(0.85) {
				allocs = g.allocationFor()
			}
			one := map[string]any{"allocations": allocBody(max(mv, 12), allocs)}
			g.consumerFields(max(mv, 8), c, one)
			body[c.UUID] = one
			cons = append(cons, c.UUID)
			rps = append(rps, slices.Collect(maps.Keys(allocs))...)
		}
		r := req("post_allocs", "POST", "/allocations", mv, body)
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.afterAllocWrite(cons, rps)
			}
		}
		return r
	}}
}

func kConsumerReads(g *Generator) []builder {
	c := g.pickConsumer()
	switch g.intn(3) {
	case 0:
		r := req("del_allocs", "DELETE", "/allocations/"+c.UUID, g.mv(0), nil)
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.afterAllocWrite([]string{c.UUID}, nil)
			}
		}
		return once(r)
	case 1:
		return once(req("get_rp_allocs", "GET", rpPath(g.rpOrRandom(), "/allocations"), g.mv(0), nil))
	}
	return once(req("get_allocs", "GET", "/allocations/"+c.UUID, g.mv(0), nil))
}

// kReshape moves one class of a provider's inventory to its child, with
// the allocations against it (1.30+); without such a tree it rewrites one
// provider's inventories unchanged.
func kReshape(g *Generator) []builder {
	return []builder{func() *Request {
		mv := g.mv(30)
		invs := map[string]any{}
		allocs := map[string]any{}
		var cons, rps []string
		from, to, rc := g.reshapePlan()
		if from == nil {
			p := g.rp()
			if p == nil {
				return nil
			}
			invs[p.UUID] = map[string]any{"resource_provider_generation": p.Gen, "inventories": g.keepInventories(p)}
			rps = append(rps, p.UUID)
		} else {
			fromInv, toInv := g.keepInventories(from), g.keepInventories(to)
			toInv[rc] = fromInv[rc]
			delete(fromInv, rc)
			invs[from.UUID] = map[string]any{"resource_provider_generation": from.Gen, "inventories": fromInv}
			invs[to.UUID] = map[string]any{"resource_provider_generation": to.Gen, "inventories": toInv}
			rps = append(rps, from.UUID, to.UUID)
			cons = g.moveAllocations(mv, from.UUID, to.UUID, rc, allocs)
		}
		r := req("reshaper", "POST", "/reshaper", mv, map[string]any{"inventories": invs, "allocations": allocs})
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.afterAllocWrite(cons, rps)
			}
		}
		return r
	}}
}

// reshapePlan picks a provider with inventory and a child to move one
// class to.
func (g *Generator) reshapePlan() (from, to *provider, rc string) {
	for _, p := range g.m.providers() {
		if len(p.Inv) == 0 {
			continue
		}
		kids := g.m.children(p.UUID)
		if len(kids) == 0 || !g.chance(0.5) {
			continue
		}
		return p, pick(g, kids), pick(g, slices.Sorted(maps.Keys(p.Inv)))
	}
	return nil, nil, ""
}

// moveAllocations writes, into allocs, every consumer's allocations with
// rc moved from one provider to another.
func (g *Generator) moveAllocations(mv int, from, to, rc string, allocs map[string]any) []string {
	var cons []string
	for _, cu := range g.m.conOrder {
		c := g.m.consumers[cu]
		n, ok := c.Allocs[from][rc]
		if !ok {
			continue
		}
		moved := map[string]map[string]int{}
		for u, res := range c.Allocs {
			moved[u] = maps.Clone(res)
		}
		delete(moved[from], rc)
		if len(moved[from]) == 0 {
			delete(moved, from)
		}
		if moved[to] == nil {
			moved[to] = map[string]int{}
		}
		moved[to][rc] += n
		one := map[string]any{"allocations": allocBody(12, moved), "project_id": c.Project, "user_id": c.User,
			"consumer_generation": c.Gen}
		if mv >= 38 {
			one["consumer_type"] = pick(g, consTypes)
		}
		allocs[cu] = one
		cons = append(cons, cu)
	}
	return cons
}
