package difftest

import (
	"maps"
	"slices"
)

// kOverCapacity puts a provider over capacity under its allocations (by
// raising the reserved amount of a class a consumer holds there), then
// rewrites that consumer's allocations: shrunk, unchanged, grown, or
// moved to a new consumer, and finally puts the inventory back. Placement
// 8.0.0 refuses every such write; 15.0.0 (bug 2104040) allows those that
// leave the class using no more than before.
func kOverCapacity(g *Generator) []builder {
	c, u, rc, ok := g.allocatedSpot()
	if !ok {
		return kPutAllocs(g)
	}
	orig := g.m.rps[u].Inv[rc]
	return []builder{g.squeeze(u, rc), g.rewriteOver(c, u, rc), g.restoreInventory(u, rc, orig)}
}

// allocatedSpot picks a consumer, a provider and a class it holds there.
func (g *Generator) allocatedSpot() (c, u, rc string, ok bool) {
	type spot struct{ c, u, rc string }
	var spots []spot
	for _, cu := range g.m.conOrder {
		allocs := g.m.consumers[cu].Allocs
		for _, pu := range slices.Sorted(maps.Keys(allocs)) {
			p := g.m.rps[pu]
			if p == nil {
				continue
			}
			for _, class := range slices.Sorted(maps.Keys(allocs[pu])) {
				if _, has := p.Inv[class]; has && allocs[pu][class] > 0 {
					spots = append(spots, spot{cu, pu, class})
				}
			}
		}
	}
	if len(spots) == 0 {
		return "", "", "", false
	}
	s := pick(g, spots)
	return s.c, s.u, s.rc, true
}

// inventoryBody is one class's inventory as PUT /inventories/{rc} takes it.
func inventoryBody(iv inventory, gen int) map[string]any {
	return map[string]any{"total": iv.Total, "reserved": iv.Reserved, "min_unit": iv.MinUnit, "max_unit": iv.MaxUnit,
		"step_size": iv.StepSize, "allocation_ratio": iv.Ratio, "resource_provider_generation": gen}
}

// squeeze raises rc's reserved amount on u so that the capacity is below
// what is allocated (reserved may equal total from 1.26).
func (g *Generator) squeeze(u, rc string) builder {
	return func() *Request {
		p := g.m.rps[u]
		if p == nil {
			return nil
		}
		iv, ok := p.Inv[rc]
		used := g.m.used(u, rc)
		if !ok || used == 0 || iv.Ratio <= 0 {
			return nil
		}
		iv.Reserved = min(max(iv.Total-int(float64(used-1)/iv.Ratio), 0), iv.Total)
		r := req("over_capacity", "PUT", rpPath(u, "/inventories/"+rc), g.mvAtLeast(26), inventoryBody(iv, p.Gen))
		r.Note = "reserved raised above what the allocations leave"
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
			}
		}
		return r
	}
}

// rewriteOver rewrites consumer c's allocations with its amount of rc on
// u changed (or moves them all to a new consumer).
func (g *Generator) rewriteOver(c, u, rc string) builder {
	return func() *Request {
		cons, p := g.m.consumers[c], g.m.rps[u]
		if cons == nil || p == nil || cons.Allocs[u][rc] == 0 {
			return nil
		}
		allocs := map[string]map[string]int{}
		for pu, res := range cons.Allocs {
			allocs[pu] = maps.Clone(res)
		}
		step := max(p.Inv[rc].StepSize, 1)
		mv := g.mvAtLeast(28)
		body := map[string]any{"allocations": allocBody(mv, allocs)}
		g.consumerFields(mv, cons, body)
		changed := []string{c}
		var r *Request
		switch n := allocs[u][rc]; g.intn(4) {
		case 0:
			if n-step >= max(p.Inv[rc].MinUnit, 1) {
				allocs[u][rc] = n - step
				body["allocations"] = allocBody(mv, allocs)
			}
			r = req("over_capacity", "PUT", "/allocations/"+c, mv, body)
		case 1:
			allocs[u][rc] = n + step
			body["allocations"] = allocBody(mv, allocs)
			r = req("over_capacity", "PUT", "/allocations/"+c, mv, body)
		case 2:
			r = req("over_capacity", "PUT", "/allocations/"+c, mv, body)
		default:
			moved := g.m.consumerFor(g.uuid())
			empty := map[string]any{"allocations": map[string]any{}}
			g.consumerFields(mv, cons, empty)
			g.consumerFields(mv, moved, body)
			changed = append(changed, moved.UUID)
			r = req("over_capacity", "POST", "/allocations", mv, map[string]any{c: empty, moved.UUID: body})
		}
		r.Note = "allocations rewritten on an over-capacity provider"
		r.observe = func(a *Answer) {
			if a.Status == 204 {
				g.afterAllocWrite(changed, slices.Collect(maps.Keys(allocs)))
			}
		}
		return r
	}
}

// restoreInventory puts rc's inventory on u back as it was.
func (g *Generator) restoreInventory(u, rc string, orig inventory) builder {
	return func() *Request {
		p := g.m.rps[u]
		if p == nil {
			return nil
		}
		if _, ok := p.Inv[rc]; !ok {
			return nil
		}
		r := req("over_capacity", "PUT", rpPath(u, "/inventories/"+rc), g.mvAtLeast(26), inventoryBody(orig, p.Gen))
		r.observe = func(a *Answer) {
			if a.Status == 200 {
				g.queue = append([]builder{g.syncInventories(u)}, g.queue...)
			}
		}
		return r
	}
}
