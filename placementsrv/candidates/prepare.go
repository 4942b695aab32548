package candidates

import (
	"math"
	"slices"
)

// prepare resolves the request; false means no candidates.
func (e *engine) prepare() (bool, error) {
	if ok, err := e.resolveRoots(); !ok {
		return false, err
	}
	if ok, err := e.resolveGroups(); !ok {
		return false, err
	}
	e.isolate = e.req.GroupPolicy == PolicyIsolate
	e.excludeNested = !e.opt.NestedAware && e.s.HasTrees
	e.resolveSameSubtree()
	e.target = e.opt.MaxCandidates
	// Folded amounts depend on every product, so a limit cannot stop
	// generation early then.
	e.infl = e.newInflation()
	if l := e.req.Limit; l > 0 && !e.opt.Randomize && !e.excludeNested && e.infl == nil {
		if e.target == 0 || l < e.target {
			e.target = l
		}
	}
	e.upstream = e.opt.MaxCandidates > 0
	e.useUsed = 1
	if e.opt.WideTrees {
		e.useUsed = 0
	}
	e.withMeta = e.opt.Order == BreadthFirst || e.upstream && e.excludeNested
	if e.opt.Order == BreadthFirst {
		e.breadth = true
		e.countCap = e.opt.WideTrees
		e.perRoot, e.target = e.target, 0
		e.rankBound = math.MaxInt64
	}
	e.opts = make([][]option, len(e.groups))
	e.chosen = make([]int32, len(e.groups))
	e.optOrder = optionOrder(e.groups)
	return true, nil
}

// optionOrder lists the groups in the order their options are listed at
// an anchor: granular groups first, since a single provider with their
// traits is what most anchors lack, so that an anchor fails before the
// unsuffixed group's product of per-class lists is built. The options do
// not depend on one another, so the order changes no answer.
func optionOrder(groups []*group) []int {
	order := make([]int, 0, len(groups))
	for i, g := range groups {
		if g.granular {
			order = append(order, i)
		}
	}
	for i, g := range groups {
		if !g.granular {
			order = append(order, i)
		}
	}
	return order
}

// resolveRoots interns root_required; false means no root qualifies (or
// a trait is unknown: the error).
func (e *engine) resolveRoots() (bool, error) {
	s, req := e.s, e.req
	if len(req.RootRequired)+len(req.RootForbidden) == 0 {
		return true, nil
	}
	var err error
	if len(req.RootRequired) > 0 {
		if e.anchorReq, err = traitIDs(s, req.RootRequired); err != nil {
			return false, err
		}
	}
	if len(req.RootForbidden) > 0 {
		if e.anchorForb, err = traitIDs(s, req.RootForbidden); err != nil {
			return false, err
		}
	}
	return slices.ContainsFunc(s.Roots, e.anchorOK), nil
}

// resolveGroups resolves the groups in request order; false means no
// candidates (or an unknown name: the error).
func (e *engine) resolveGroups() (bool, error) {
	req := e.req
	for i := range req.Groups {
		g, out, err := resolveGroup(e.s, i, &req.Groups[i])
		switch out {
		case noMatch:
			return false, nil
		case failed:
			// Placement stops at the first group without candidates, so a
			// bad name in a later group goes unnoticed.
			for _, prev := range e.groups {
				if !e.anywhere(prev) {
					return false, nil
				}
			}
			return false, err
		}
		if !g.granular && len(g.res) == 0 {
			return false, nil
		}
		e.groups = append(e.groups, g)
	}
	return len(e.groups) > 0, nil
}

// resolveSameSubtree turns same_subtree's suffix sets into group
// positions, each checked at the depth where its last group is placed.
func (e *engine) resolveSameSubtree() {
	pos := map[string]int{}
	for i, g := range e.groups {
		pos[g.suffix] = i
	}
	e.subtrees = make([][]int, len(e.groups))
	e.sets = e.sets[:0]
	for _, set := range e.req.SameSubtree {
		var members []int
		last := -1
		for _, suf := range set {
			i, ok := pos[suf]
			if !ok || slices.Contains(members, i) {
				continue
			}
			members = append(members, i)
			last = max(last, i)
		}
		if len(members) > 1 {
			e.subtrees[last] = append(e.subtrees[last], len(e.sets))
			e.sets = append(e.sets, members)
		}
	}
}

// anywhere reports whether g has an option at any anchor.
func (e *engine) anywhere(g *group) bool {
	for _, r := range e.s.Roots {
		if !e.anchorOK(r) {
			continue
		}
		e.enterAnchor(r)
		if len(e.options(g, r, nil)) > 0 {
			return true
		}
	}
	return false
}
