package difftest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// acGroup is one request group of GET /allocation_candidates.
type acGroup struct {
	suffix       string // "" for the unnumbered group, "1" or (1.33+) "_NAME1"
	params       []string
	resourceless bool
}

// kAllocationCandidates asks for candidates with the features of the
// microversion picked: granular groups (1.25), group_policy, limit (1.16),
// required/forbidden traits (1.17/1.22/1.39), member_of (1.21/1.32),
// in_tree (1.31), root_required (1.35), same_subtree and resourceless
// groups (1.36). With limit, the same query without it goes first: a
// limited answer is checked against the unlimited one.
func kAllocationCandidates(g *Generator) []builder {
	mv := g.mv(10)
	var kv []string
	var suffixes, resourceless []string
	groups := g.acGroups(mv)
	for _, gr := range groups {
		kv = append(kv, gr.params...)
		if gr.suffix != "" {
			suffixes = append(suffixes, gr.suffix)
		}
		if gr.resourceless {
			resourceless = append(resourceless, gr.suffix)
		}
	}
	if len(suffixes) > 1 || (len(suffixes) == 1 && g.chance(0.3)) {
		if g.chance(0.9) {
			kv = append(kv, "group_policy", pick(g, []string{"none", "isolate"}))
		}
	}
	if mv >= 35 && g.chance(0.2) {
		kv = append(kv, "root_required", g.requiredParam(min(mv, 38)))
	}
	// A resourceless group must be in same_subtree (now and then it is
	// left out, which is an error).
	if mv >= 36 && len(suffixes) > 1 && (len(resourceless) > 0 || g.chance(0.4)) {
		same := some(g, suffixes, len(suffixes), true)
		if g.chance(0.9) {
			for _, s := range resourceless {
				same = addName(same, s)
			}
		}
		kv = append(kv, "same_subtree", strings.Join(same, ","))
	}
	path := "/allocation_candidates?" + query(kv...)
	if mv >= 16 && g.chance(0.35) {
		limited := path + "&limit=" + fmt.Sprint(1+g.intn(4))
		return []builder{
			func() *Request { return req("ac-unlimited", "GET", path, mv, nil) },
			func() *Request { return req("ac", "GET", limited, mv, nil) },
		}
	}
	return once(req("ac", "GET", path, mv, nil))
}

// acGroups builds the unnumbered group and, from 1.25, granular ones;
// from 1.36 a granular group may ask for no resources.
func (g *Generator) acGroups(mv int) []acGroup {
	tree := g.acTree()
	var groups []acGroup
	if mv < 36 || g.chance(0.8) {
		groups = append(groups, g.acGroup(mv, tree, "", false))
	}
	if mv >= 25 {
		for i := range g.intn(4) {
			suffix := fmt.Sprint(i + 1)
			if mv >= 33 && g.chance(0.5) {
				suffix = pick(g, []string{"_COMPUTE", "_ACCEL", "_NET", "_x-y_1"}) + suffix
			}
			groups = append(groups, g.acGroup(mv, tree, suffix, mv >= 36 && g.chance(0.2)))
		}
	}
	return groups
}

// acGroup is the parameters of one group, with amounts taken from
// inventories that exist (now and then too big).
func (g *Generator) acGroup(mv int, tree []*provider, suffix string, resourceless bool) acGroup {
	gr := acGroup{suffix: suffix, resourceless: resourceless}
	key := func(k string) string { return k + suffix }
	if !resourceless {
		gr.params = append(gr.params, key("resources"), g.acResources(tree))
	}
	traitsFrom := 17
	if suffix != "" {
		traitsFrom = 25
	}
	if mv >= traitsFrom && (resourceless || g.chance(0.4)) {
		pool := g.traitPool()
		if len(tree) > 0 && g.chance(0.6) {
			pool = treeTraits(tree)
		}
		gr.params = append(gr.params, key("required"), g.requiredFrom(mv, pool))
	}
	if mv >= 21 && g.chance(0.25) {
		gr.params = append(gr.params, key("member_of"), g.memberOf(mv))
	}
	if mv >= 31 && g.chance(0.15) {
		gr.params = append(gr.params, key("in_tree"), g.rpOrRandom())
	}
	return gr
}

// acResources asks for one or two classes of a provider that has them,
// in feasible amounts mostly; the provider is mostly one of tree (a tree
// and the sharing providers of its aggregates), so that several groups
// can be satisfied together.
func (g *Generator) acResources(tree []*provider) string {
	var withInv []*provider
	for _, p := range g.m.providers() {
		if len(p.Inv) > 0 {
			withInv = append(withInv, p)
		}
	}
	if len(tree) > 0 && g.chance(0.8) {
		withInv = tree
	}
	if len(withInv) == 0 || g.chance(0.1) {
		return g.resourcesParam(g.chance(0.3))
	}
	p := pick(g, withInv)
	var parts []string
	for _, rc := range some(g, slices.Sorted(maps.Keys(p.Inv)), 2, true) {
		parts = append(parts, fmt.Sprintf("%s:%d", rc, g.feasible(p, rc, g.chance(0.05))))
	}
	return strings.Join(parts, ",")
}

// acTree picks a tree with inventory: its providers with inventory and
// the sharing providers in its root's aggregates.
func (g *Generator) acTree() []*provider {
	p := g.rp()
	if p == nil {
		return nil
	}
	root := g.m.rps[p.Root]
	var out []*provider
	for _, q := range g.m.providers() {
		if len(q.Inv) == 0 {
			continue
		}
		shares := slices.Contains(q.Traits, sharesTrait) && root != nil && overlaps(q.Aggs, root.Aggs)
		if q.Root == p.Root || shares {
			out = append(out, q)
		}
	}
	return out
}

// treeTraits lists the traits the providers of tree have.
func treeTraits(tree []*provider) []string {
	var out []string
	for _, p := range tree {
		for _, t := range p.Traits {
			out = addName(out, t)
		}
	}
	slices.Sort(out)
	return out
}

func overlaps(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}
