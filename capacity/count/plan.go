package count

import (
	"cmp"
	"slices"

	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// plan is a flavor's request resolved against the snapshot's interned
// ids, once per Count, for the closed form; q is the same request
// prepared for the engine on the count's draft.
type plan struct {
	q      *candidates.Query
	groups []cgroup
	// rootReq and rootForb are root_required's traits.
	rootReq, rootForb []int32
	// totals has one entry per requested class, by class id.
	totals []classTotal
	// isolate: group_policy=isolate and several granular groups, which
	// then need several providers.
	isolate bool
	// shared: a sharing provider somewhere has a requested class.
	shared bool
	// batch: a candidate claimed stays the first of its root for as long
	// as it fits, so it is claimed as many times at once (see claims).
	batch bool
	// policyIsolate is group_policy=isolate.
	policyIsolate bool
	// un is the unsuffixed group's amounts.
	un []amount

	// In columns and trait bits (masks): the classes asked, the root's
	// traits, and for a root of one provider every group's traits.
	cols                []colTotal
	colMask             uint64
	rootReqM, rootForbM uint64
	clausesAll          []uint64
	forbAll             uint64
	never               bool // several granular groups isolated: not on one provider
}

// colTotal is a classTotal by column; least is its least amount.
type colTotal struct {
	col     int32
	total   int64
	least   int64
	amounts []int64
}

// cgroup is one request group in ids.
type cgroup struct {
	granular bool
	res      []amount
	required [][]int32 // any-of lists, all needed
	forbid   []int32
	// by column and bit
	colRes  []colAmount
	clauses []uint64
	forbM   uint64
}

type colAmount struct {
	col int32
	n   int64
}

type amount struct {
	class int32
	n     int64
}

// classTotal is what the groups ask of one class together: each group's
// amount must pass min_unit, max_unit and step_size by itself, their
// total max_unit and the capacity left.
type classTotal struct {
	class   int32
	total   int64
	amounts []int64
}

// allocation is one amount of a claim.
type allocation = candidates.Alloc

// compile resolves req as the API parses its query string; nil means
// no candidates anywhere, with a note when Placement would refuse the
// request or the count is approximate.
func (w *world) compile(req flavorreq.Request) (*plan, string) {
	raw := req.Query(0)
	creq, herr := candidates.ParseQuery(raw, query.Values(raw), microversion.SameSubtree)
	if herr != nil {
		return nil, "Placement refuses the request: " + herr.Error()
	}
	q, err := candidates.Prepare(w.draft.Snapshot(), creq, candidates.Options{NestedAware: true})
	if err != nil {
		return nil, "Placement refuses the request: " + err.Error()
	}
	note := ""
	if q.Folds() {
		note = "Placement folds the amounts of a class asked by the unsuffixed group and a granular one in place; the count takes the amounts asked"
	}
	p, ok := w.resolve(creq)
	if !ok {
		return nil, note
	}
	p.q = q
	return p, note
}

// resolve interns creq's names; false when it has no candidates anywhere
// (a group without resources, or a name the snapshot does not know that
// Placement, stopping at an earlier empty group, did not refuse).
func (w *world) resolve(creq candidates.Request) (*plan, bool) {
	s := w.s
	p := &plan{}
	granular := 0
	unsharedUn, hasUn := false, false
	for _, g := range creq.Groups {
		if len(g.Resources) == 0 {
			return nil, false
		}
		cg := cgroup{granular: g.Suffix != ""}
		ok := true
		for _, anyOf := range g.Required {
			ids, known := traitIDs(s.TraitByName, anyOf)
			cg.required, ok = append(cg.required, ids), ok && known
		}
		cg.forbid, ok = allTraits(s.TraitByName, g.Forbidden, ok)
		for _, r := range g.Resources {
			c, known := s.ClassByName[r.Class]
			if !known {
				return nil, false
			}
			cg.res = append(cg.res, amount{c, r.Amount})
			p.addTotal(c, r.Amount)
			p.shared = p.shared || s.SharedClass[c]
			unsharedUn = unsharedUn || !cg.granular && !s.SharedClass[c]
		}
		if !ok {
			return nil, false
		}
		hasUn = hasUn || !cg.granular
		if !cg.granular {
			p.un = cg.res
		}
		if cg.granular {
			granular++
		}
		p.groups = append(p.groups, cg)
	}
	if len(p.groups) == 0 {
		return nil, false
	}
	slices.SortFunc(p.totals, func(a, b classTotal) int { return cmp.Compare(a.class, b.class) })
	ok := true
	p.rootReq, ok = allTraits(s.TraitByName, creq.RootRequired, ok)
	p.rootForb, ok = allTraits(s.TraitByName, creq.RootForbidden, ok)
	p.policyIsolate = creq.GroupPolicy == candidates.PolicyIsolate
	p.isolate = p.policyIsolate && granular > 1
	// An option of the unsuffixed group made of sharing providers only is
	// offered at one anchor, chosen anew as usage changes; only when it
	// cannot arise is the first candidate stable (see claims).
	p.batch = unsharedUn || !hasUn
	return p, ok
}

func (p *plan) addTotal(c int32, n int64) {
	for i := range p.totals {
		if p.totals[i].class == c {
			p.totals[i].total += n
			p.totals[i].amounts = append(p.totals[i].amounts, n)
			return
		}
	}
	p.totals = append(p.totals, classTotal{class: c, total: n, amounts: []int64{n}})
}

// traitIDs interns names; false when one is unknown.
func traitIDs(ids map[string]int32, names []string) ([]int32, bool) {
	out := make([]int32, 0, len(names))
	for _, n := range names {
		id, ok := ids[n]
		if !ok {
			return nil, false
		}
		out = append(out, id)
	}
	return out, true
}

// allTraits is traitIDs folded into ok.
func allTraits(ids map[string]int32, names []string, ok bool) ([]int32, bool) {
	out, known := traitIDs(ids, names)
	return out, ok && known
}

// traits lists every trait id p names.
func (p *plan) traits() []int32 {
	out := append(slices.Clone(p.rootReq), p.rootForb...)
	for _, g := range p.groups {
		for _, anyOf := range g.required {
			out = append(out, anyOf...)
		}
		out = append(out, g.forbid...)
	}
	return out
}

// masks fills p's columns and bits from w's numbering.
func (p *plan) masks(w *world) {
	bits := func(ids []int32) uint64 {
		var m uint64
		for _, id := range ids {
			m |= 1 << w.bit[id]
		}
		return m
	}
	p.cols = p.cols[:0]
	for _, t := range p.totals {
		c := w.col[t.class]
		p.cols = append(p.cols, colTotal{col: c, total: t.total, least: slices.Min(t.amounts), amounts: t.amounts})
		p.colMask |= 1 << c
	}
	p.rootReqM, p.rootForbM = bits(p.rootReq), bits(p.rootForb)
	p.forbAll = p.rootForbM
	p.clausesAll = nil
	for _, id := range p.rootReq {
		p.clausesAll = append(p.clausesAll, bits([]int32{id}))
	}
	for gi := range p.groups {
		g := &p.groups[gi]
		g.colRes, g.clauses = nil, nil
		for _, a := range g.res {
			g.colRes = append(g.colRes, colAmount{w.col[a.class], a.n})
		}
		for _, anyOf := range g.required {
			g.clauses = append(g.clauses, bits(anyOf))
		}
		g.forbM = bits(g.forbid)
		p.clausesAll = append(p.clausesAll, g.clauses...)
		p.forbAll |= g.forbM
	}
	p.never = p.isolate
}

// anchorOK applies root_required to a root's trait bits.
func (p *plan) anchorOK(tm uint64) bool {
	return tm&p.rootReqM == p.rootReqM && tm&p.rootForbM == 0
}
