package candidates

// The flat path: the most common request, one flavor's resources in the
// unsuffixed group with nothing else to check, asked of a root that is a
// tree of one provider and anchors no sharing provider. There the only
// possible candidate is the root itself, when every requested class fits
// its inventory, so the search's bookkeeping (numbering the anchor's
// providers and slots, listing options, taking and releasing amounts) is
// skipped and the candidate is handed to the sink directly, with the
// allocations in the order the search would give them (the root's
// inventory order). Every other root of the same request takes the
// ordinary search.

// flatGroup returns the request's group when the flat path can serve it:
// a streamed answer to a single unsuffixed group with resources and no
// traits, aggregates or tree to check, and no folding of amounts. Nil
// otherwise.
func (e *engine) flatGroup() *group {
	if e.sink == nil || len(e.groups) != 1 || e.infl != nil || len(e.sets) > 0 {
		return nil
	}
	g := e.groups[0]
	if g.granular || len(g.res) == 0 || len(g.required) > 0 || len(g.forbid) > 0 ||
		g.memberOf != nil || len(g.badAggs) > 0 || g.forbidsAggs || g.inTree >= 0 {
		return nil
	}
	return g
}

// flatAnchor serves root r of a flat request when r is a lone provider
// that neither shares nor anchors sharing providers, reporting whether it
// did; it emits r's candidate, if r has one.
func (e *engine) flatAnchor(g *group, r int32) bool {
	p := &e.s.Providers[r]
	if len(p.Tree) != 1 || len(p.SharedTo) > 0 || p.Sharing {
		return false
	}
	allocs := e.cur.Allocs[:0]
	invs := e.s.Inventories(r)
	for k := range invs {
		for _, ra := range g.res {
			if ra.class == invs[k].Class {
				if !invs[k].Fits(ra.amount) {
					return true
				}
				allocs = append(allocs, Alloc{r, ra.class, ra.amount})
				break
			}
		}
	}
	if len(allocs) != len(g.res) {
		return true // a class r has no inventory of
	}
	e.cur.Allocs = allocs
	e.flatMapping[0] = r
	e.cur.Mappings[0] = e.flatMapping[:]
	e.emitted++
	e.markRoot(r)
	if e.usedBits != nil {
		setBit(e.usedBits, r)
	}
	if !e.sink(&e.cur) || e.target > 0 && e.emitted >= e.target {
		e.stopped = true
	}
	return true
}
