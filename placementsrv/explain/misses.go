package explain

import (
	"slices"
	"sort"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// misses lists up to n roots without candidates, fewest reasons first,
// then in root order.
func (x *explainer) misses(n int) []Miss {
	if n <= 0 {
		return nil
	}
	var all []Miss
	var dist []int
	for _, r := range x.s.Roots {
		if x.full[r] {
			continue
		}
		p := &x.s.Providers[r]
		why := x.reasonsFor(r)
		m := Miss{Root: p.Name, UUID: p.UUID}
		d := 0
		for _, w := range why {
			m.Reasons = append(m.Reasons, w.text)
			d += w.weight()
		}
		all, dist = append(all, m), append(dist, d)
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return dist[idx[i]] < dist[idx[j]] })
	out := make([]Miss, 0, min(n, len(all)))
	for _, i := range idx[:min(n, len(all))] {
		out = append(out, all[i])
	}
	return out
}

// reason is one thing keeping a root out; far marks a class the tree has
// no inventory of at all, further from a fit than any shortfall.
type reason struct {
	text string
	far  bool
}

func (r reason) weight() int {
	if r.far {
		return 10
	}
	return 1
}

func texts(rs []string) []reason {
	out := make([]reason, len(rs))
	for i, t := range rs {
		out[i] = reason{text: t}
	}
	return out
}

// reasonsFor says what keeps root r out of the answer.
func (x *explainer) reasonsFor(r int32) []reason {
	out := texts(x.rootReasons(r))
	rootFailed := len(out) > 0
	for gi, g := range x.req.Groups {
		if x.alone[gi][r] {
			continue
		}
		why := x.groupReasons(gi, r)
		if len(why) == 0 && !rootFailed {
			why = texts([]string{"no way to take the group's amounts from this tree"})
		}
		for _, w := range why {
			if len(x.req.Groups) > 1 {
				w.text = "group " + groupLabel(g.Suffix) + ": " + w.text
			}
			out = append(out, w)
		}
	}
	if len(out) > 0 {
		return out
	}
	switch {
	case !x.together[r]:
		return texts([]string{"each group fits alone, not all together (amounts combined exceed capacity)"})
	case !x.subtree[r]:
		return texts([]string{"same_subtree: no provider has the groups' providers in its subtree"})
	default:
		return texts([]string{"group_policy=isolate: the groups cannot each have a provider of their own"})
	}
}

// rootReasons checks root_required on root r.
func (x *explainer) rootReasons(r int32) []string {
	p := &x.s.Providers[r]
	var out []string
	for i, t := range x.req.RootRequired {
		if id, ok := x.s.TraitByName[t]; !ok || !p.HasTrait(id) {
			w := "root lacks trait " + t
			if x.pre.RootAdded(&x.req, i) {
				w += " (OWNER_NOVA pre-filter)"
			}
			out = append(out, w)
		}
	}
	for _, t := range x.req.RootForbidden {
		if id, ok := x.s.TraitByName[t]; ok && p.HasTrait(id) {
			out = append(out, "root has forbidden trait "+t)
		}
	}
	return out
}

// pool lists the providers root r's candidates can take from: its tree,
// then the sharing providers it anchors.
func (x *explainer) pool(r int32) []int32 {
	p := &x.s.Providers[r]
	return append(slices.Clone(p.Tree), p.SharedTo...)
}

// groupReasons says why group gi has no candidate at root r: for a
// granular group, what the closest single provider lacks; for the
// unsuffixed group, the traits no provider has and, per class, what the
// closest provider of the class lacks.
func (x *explainer) groupReasons(gi int, r int32) []reason {
	g := &x.req.Groups[gi]
	flts := x.filters(gi)
	pool := x.pool(r)
	if g.Suffix != "" {
		return x.closest(pool, flts, g.Resources)
	}
	var out []reason
	var rest []provFilter
	for _, f := range flts {
		if slices.ContainsFunc(pool, f.ok) {
			rest = append(rest, f)
			continue
		}
		if len(pool) > 0 {
			out = append(out, reason{text: f.why(pool[0])})
		}
	}
	// A filter no provider of the pool passes is reported once, above;
	// per class only the filters some provider could pass remain.
	for _, res := range g.Resources {
		out = append(out, x.closest(pool, rest, []candidates.Resource{res})...)
	}
	return out
}

// closest finds the provider of pool that breaks the fewest of flts and
// res and returns what it breaks, each prefixed with its name; nothing
// when one breaks nothing.
func (x *explainer) closest(pool []int32, flts []provFilter, res []candidates.Resource) []reason {
	var best []reason
	bestDist, found := 0, false
	for _, p := range pool {
		if len(res) > 0 && !x.hasAny(p, res) {
			continue
		}
		var why []reason
		name := x.s.Providers[p].Name
		for _, f := range flts {
			if !f.ok(p) {
				why = append(why, reason{text: name + ": " + f.why(p)})
			}
		}
		for _, rs := range res {
			c, ok := x.s.ClassByName[rs.Class]
			var inv *readmodel.SnapInventory
			if ok {
				inv = x.s.Inventory(p, c)
			}
			if w := shortfall(rs.Class, inv, rs.Amount); w != "" {
				why = append(why, reason{text: name + ": " + w, far: inv == nil})
			}
		}
		d := 0
		for _, w := range why {
			d += w.weight()
		}
		if !found || d < bestDist {
			best, bestDist, found = why, d, true
		}
	}
	if !found {
		var out []reason
		for _, rs := range res {
			out = append(out, reason{text: "no " + rs.Class + " inventory in the tree or its sharing providers", far: true})
		}
		return out
	}
	return best
}

func (x *explainer) hasAny(p int32, res []candidates.Resource) bool {
	for _, r := range res {
		if c, ok := x.s.ClassByName[r.Class]; ok && x.s.Inventory(p, c) != nil {
			return true
		}
	}
	return false
}
