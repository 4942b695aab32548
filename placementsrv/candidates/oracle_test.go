package candidates

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// The oracle is a deliberately naive transcription of Placement 8.0.0's
// algorithm (objects/allocation_candidate.py, research_context.py): sets
// of providers per class, per group allocation requests keyed by anchor,
// the full product per anchor, then filters. It shares nothing with the
// engine but the snapshot.

type oArr struct {
	prov, class int32
	amount      int64
}

type oAreq struct {
	anchor   int32
	sameProv bool
	rrs      []oArr
	mappings map[string][]int32 // suffix -> providers (set, sorted)
}

type oracle struct {
	s       *readmodel.Snapshot
	anchors map[int32]bool // nil: no root filter
	sharing map[int32]bool
	pool    *pyfmt.SetPool // every Python set of the request
}

func (o *oracle) inAnchors(r int32) bool { return o.anchors == nil || o.anchors[r] }

// anchorsFor is anchors_for_sharing_providers for one provider: roots of
// every provider sharing an aggregate with it.
func (o *oracle) anchorsFor(sp int32) map[int32]bool {
	out := map[int32]bool{}
	for _, a := range o.s.Providers[sp].Aggregates {
		for i := range o.s.Providers {
			if slices.Contains(o.s.Providers[i].Aggregates, a) {
				out[o.s.Providers[i].Root] = true
			}
		}
	}
	return out
}

// byID finds a provider by store id.
func (o *oracle) byID(id int64) int32 {
	for i := range o.s.Providers {
		if o.s.Providers[i].ID == id {
			return int32(i)
		}
	}
	panic(fmt.Sprint("no provider with id ", id))
}

func (o *oracle) classDB(c int32) int64 { return o.s.ClassDBIDs[c] }

// classSet is RPCandidateList.add_rps for one class: its providers with
// capacity under their roots (a set of pairs from the query rows, in id
// order), then, unless in_tree, the sharing providers' anchors.
func (o *oracle) classSet(with map[int32]bool, c int32, sharing bool, inAggs map[int32]bool) *pyfmt.Set {
	ps := o.s.Providers
	var provs []int32
	for p := range with {
		provs = append(provs, p)
	}
	slices.Sort(provs)
	triples := func(pairs *pyfmt.Set) *pyfmt.Set {
		out := o.pool.NewSet()
		pairs.Each(func(k *pyfmt.Tuple) { out.Add(pyfmt.Tuple{A: k.A, B: k.B, C: o.classDB(c), N: 3}) })
		return out
	}
	pairs := o.pool.NewSet()
	for _, p := range provs {
		pairs.Add(pyfmt.Tuple{A: ps[p].ID, B: ps[ps[p].Root].ID, N: 2})
	}
	set := o.pool.NewSet()
	set.Merge(triples(pairs))
	anchors := o.pool.NewSet()
	for _, p := range provs {
		if !sharing || !o.sharing[p] || (inAggs != nil && !inAggs[p]) {
			continue
		}
		var roots []int32
		for r := range o.anchorsFor(p) {
			roots = append(roots, r)
		}
		slices.SortFunc(roots, func(a, b int32) int { return int(ps[a].ID - ps[b].ID) })
		for _, r := range roots {
			anchors.Add(pyfmt.Tuple{A: ps[p].ID, B: ps[r].ID, N: 2})
		}
	}
	if anchors.Len() > 0 {
		set.Merge(triples(anchors))
	}
	return set
}

func (o *oracle) traitIDs(names []string) ([]int32, error) {
	var out []int32
	for _, n := range names {
		id, ok := o.s.TraitByName[n]
		if !ok {
			return nil, &NotFoundError{Name: n}
		}
		out = append(out, id)
	}
	return out, nil
}

func (o *oracle) has(p int32, t int32) bool { return slices.Contains(o.s.Providers[p].Traits, t) }

func (o *oracle) hasAnyT(p int32, ts []int32) bool {
	for _, t := range ts {
		if o.has(p, t) {
			return true
		}
	}
	return false
}

// oracleFind returns candidate keys and the summary providers, or an error.
func oracleFind(s *readmodel.Snapshot, req Request, nestedAware bool) (map[string]bool, map[int32]bool, bool, error) {
	o := &oracle{s: s, sharing: map[int32]bool{}, pool: &pyfmt.SetPool{}}
	if len(req.RootRequired)+len(req.RootForbidden) > 0 {
		var rq, fb []int32
		var err error
		if len(req.RootRequired) > 0 {
			if rq, err = o.traitIDs(req.RootRequired); err != nil {
				return nil, nil, false, err
			}
		}
		if len(req.RootForbidden) > 0 {
			if fb, err = o.traitIDs(req.RootForbidden); err != nil {
				return nil, nil, false, err
			}
		}
		o.anchors = map[int32]bool{}
		for i := range s.Providers {
			p := int32(i)
			if s.Providers[i].Parent != -1 {
				continue
			}
			ok := true
			for _, t := range rq {
				ok = ok && o.has(p, t)
			}
			if ok && !o.hasAnyT(p, fb) {
				o.anchors[p] = true
			}
		}
		if len(o.anchors) == 0 {
			return map[string]bool{}, map[int32]bool{}, false, nil
		}
	}
	hasTrees := false
	for i := range s.Providers {
		if s.Providers[i].Parent >= 0 {
			hasTrees = true
		}
		if id, ok := s.TraitByName["MISC_SHARES_VIA_AGGREGATE"]; ok && o.has(int32(i), id) {
			o.sharing[int32(i)] = true
		}
	}
	cands := map[string][]oAreq{}
	var order []string
	for gi := range req.Groups {
		g := &req.Groups[gi]
		areqs, err := o.group(g, hasTrees)
		if err != nil {
			return nil, nil, false, err
		}
		if len(areqs) == 0 {
			return map[string]bool{}, map[int32]bool{}, false, nil
		}
		for i := range areqs {
			areqs[i].sameProv = g.Suffix != ""
		}
		cands[g.Suffix] = areqs
		order = append(order, g.Suffix)
	}
	// _merge_candidates
	byAnchor := map[int32]map[string][]oAreq{}
	for suf, list := range cands {
		for _, a := range list {
			if byAnchor[a.anchor] == nil {
				byAnchor[a.anchor] = map[string][]oAreq{}
			}
			byAnchor[a.anchor][suf] = append(byAnchor[a.anchor][suf], a)
		}
	}
	for _, bySuf := range byAnchor {
		for gi := range req.Groups {
			if g := &req.Groups[gi]; g.Suffix != "" {
				o.granularOrder(g, bySuf[g.Suffix])
			}
		}
	}
	numGranular := 0
	for _, suf := range order {
		if suf != "" {
			numGranular++
		}
	}
	type final struct {
		rrs      []oArr
		mappings map[string][]int32
	}
	fold := newOFold(req.GroupPolicy)
	var passed [][]oRef
	var passedMaps []map[string][]int32
	for _, bySuf := range byAnchor {
		if len(bySuf) != len(order) {
			continue
		}
		idx := make([]int, len(order))
		for {
			combo := make([]oAreq, len(order))
			for k, suf := range order {
				combo[k] = bySuf[suf][idx[k]]
			}
			if o.groupPolicyOK(combo, req.GroupPolicy, numGranular) && o.sameSubtreeOK(combo, req.SameSubtree) {
				refs, maps := fold.consolidate(combo)
				if !o.exceeds(arrs(refs)) {
					passed, passedMaps = append(passed, refs), append(passedMaps, maps)
				}
			}
			k := len(idx) - 1
			for ; k >= 0; k-- {
				idx[k]++
				if idx[k] < len(bySuf[order[k]]) {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	results := map[string]final{}
	for i, refs := range passed {
		rrs := arrs(refs)
		results[oKey(rrs, passedMaps[i], order)] = final{rrs, passedMaps[i]}
	}
	keys := map[string]bool{}
	trees := map[int32]bool{}
	used := map[int32]bool{}
	for k, f := range results {
		if !nestedAware && hasTrees {
			roots := map[int32]int32{}
			bad := false
			for _, rr := range f.rrs {
				r := s.Providers[rr.prov].Root
				if q, ok := roots[r]; ok && q != rr.prov {
					bad = true
				}
				roots[r] = rr.prov
			}
			if bad {
				continue
			}
			for _, rr := range f.rrs {
				used[rr.prov] = true
			}
		}
		keys[k] = true
		for _, rr := range f.rrs {
			trees[s.Providers[rr.prov].Root] = true
		}
	}
	sums := map[int32]bool{}
	for i := range s.Providers {
		if trees[s.Providers[i].Root] && (nestedAware || !hasTrees || used[int32(i)]) {
			sums[int32(i)] = true
		}
	}
	return keys, sums, fold.orderDependent(o) && unsuffixedOrderMatters(req), nil
}

func (o *oracle) exceeds(rrs []oArr) bool {
	for _, rr := range rrs {
		inv := o.s.Inventory(rr.prov, rr.class)
		if inv.Used+rr.amount > inv.Capacity || rr.amount > inv.MaxUnit {
			return true
		}
	}
	return false
}

func (o *oracle) groupPolicyOK(combo []oAreq, policy string, numGranular int) bool {
	if policy != PolicyIsolate {
		return true
	}
	uniq := map[int32]bool{}
	for _, a := range combo {
		if a.sameProv {
			for _, ps := range a.mappings {
				for _, p := range ps {
					uniq[p] = true
				}
			}
		}
	}
	return len(uniq) == numGranular
}

func (o *oracle) sameSubtreeOK(combo []oAreq, sets [][]string) bool {
	for _, set := range sets {
		rps := map[int32]bool{}
		for _, a := range combo {
			for _, suf := range set {
				for _, p := range a.mappings[suf] {
					rps[p] = true
				}
			}
		}
		if len(rps) == 1 {
			continue
		}
		var common map[int32]bool
		for p := range rps {
			anc := map[int32]bool{}
			for q := p; q >= 0; q = o.s.Providers[q].Parent {
				anc[q] = true
			}
			if common == nil {
				common = anc
			} else {
				for q := range common {
					if !anc[q] {
						delete(common, q)
					}
				}
			}
		}
		ok := false
		for p := range rps {
			if common[p] {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func oKey(rrs []oArr, maps map[string][]int32, order []string) string {
	rs := slices.Clone(rrs)
	sort.Slice(rs, func(i, j int) bool {
		return rs[i].prov < rs[j].prov || rs[i].prov == rs[j].prov && rs[i].class < rs[j].class
	})
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d:%d:%d,", r.prov, r.class, r.amount)
	}
	for _, suf := range order {
		ps := slices.Clone(maps[suf])
		slices.Sort(ps)
		fmt.Fprintf(&b, "|%s=%v", suf, ps)
	}
	return b.String()
}

// engineKey renders an engine candidate like oKey.
func engineKey(c Candidate, groups []Group) string {
	var b strings.Builder
	for _, a := range c.Allocs {
		fmt.Fprintf(&b, "%d:%d:%d,", a.Provider, a.Class, a.Amount)
	}
	for i, g := range groups {
		fmt.Fprintf(&b, "|%s=%v", g.Suffix, c.Mappings[i])
	}
	return b.String()
}

func (o *oracle) fitsAmt(p int32, c int32, amt int64) bool {
	inv := o.s.Inventory(p, c)
	if inv == nil {
		return false
	}
	return float64(inv.Used+amt) <= float64(inv.Total-inv.Reserved)*inv.AllocationRatio &&
		inv.MinUnit <= amt && inv.MaxUnit >= amt && amt%inv.StepSize == 0
}

// group builds one RequestGroup's allocation requests (RequestGroupSearch
// Context + _get_by_one_request).
func (o *oracle) group(g *Group, hasTrees bool) ([]oAreq, error) {
	s := o.s
	type rcAmt struct {
		c   int32
		amt int64
	}
	var res []rcAmt
	for _, r := range g.Resources {
		c, ok := s.ClassByName[r.Class]
		if !ok {
			return nil, &NotFoundError{Class: true, Name: r.Class}
		}
		res = append(res, rcAmt{c, r.Amount})
	}
	var rpsInAggs map[int32]bool
	if len(g.MemberOf) > 0 {
		rpsInAggs = map[int32]bool{}
		for i := range s.Providers {
			ok := true
			for _, cl := range g.MemberOf {
				in := false
				for _, u := range cl {
					if a, known := s.AggByUUID[u]; known && slices.Contains(s.Providers[i].Aggregates, a) {
						in = true
					}
				}
				ok = ok && in
			}
			if ok {
				rpsInAggs[int32(i)] = true
			}
		}
		if len(rpsInAggs) == 0 {
			return nil, nil
		}
	}
	var required [][]int32
	for _, anyOf := range g.Required {
		ids, err := o.traitIDs(anyOf)
		if err != nil {
			return nil, err
		}
		required = append(required, ids)
	}
	var forbidden []int32
	if len(g.Forbidden) > 0 {
		ids, err := o.traitIDs(g.Forbidden)
		if err != nil {
			return nil, err
		}
		forbidden = ids
	}
	treeRoot := int32(-1)
	if g.InTree != "" {
		p, ok := s.ByUUID[g.InTree]
		if !ok {
			return nil, nil
		}
		treeRoot = s.Providers[p].Root
	}
	withRes := map[int32]map[int32]bool{} // class -> providers
	for _, r := range res {
		m := map[int32]bool{}
		for i := range s.Providers {
			if o.fitsAmt(int32(i), r.c, r.amt) && (treeRoot < 0 || s.Providers[i].Root == treeRoot) {
				m[int32(i)] = true
			}
		}
		if len(m) == 0 {
			return nil, nil
		}
		withRes[r.c] = m
	}
	badAgg := map[int32]bool{}
	for _, u := range g.ForbiddenAggs {
		if a, ok := s.AggByUUID[u]; ok {
			for i := range s.Providers {
				if slices.Contains(s.Providers[i].Aggregates, a) {
					badAgg[int32(i)] = true
				}
			}
		}
	}
	badTrait := map[int32]bool{}
	for i := range s.Providers {
		if o.hasAnyT(int32(i), forbidden) {
			badTrait[int32(i)] = true
		}
	}
	suffix := g.Suffix
	if suffix != "" || !(len(o.sharing) > 0 || hasTrees) {
		// get_provider_ids_matching
		var filtered map[int32]bool // nil: no filter applied
		if len(required) > 0 {
			filtered = map[int32]bool{}
			for i := range s.Providers {
				ok := true
				for _, anyOf := range required {
					ok = ok && o.hasAnyT(int32(i), anyOf)
				}
				if ok {
					filtered[int32(i)] = true
				}
			}
			if len(filtered) == 0 {
				return nil, nil
			}
		}
		if rpsInAggs != nil {
			if filtered == nil {
				filtered = map[int32]bool{}
				for p := range rpsInAggs {
					filtered[p] = true
				}
			} else {
				for p := range filtered {
					if !rpsInAggs[p] {
						delete(filtered, p)
					}
				}
			}
			if len(filtered) == 0 {
				return nil, nil
			}
		}
		if len(res) == 0 && filtered == nil {
			// get_providers_with_root's rows are kept only if in
			// filtered_rps, still the empty set here.
			return nil, nil
		}
		var provs []int32
		for i := range s.Providers {
			p := int32(i)
			if filtered != nil && !filtered[p] {
				continue
			}
			if badAgg[p] || badTrait[p] {
				continue
			}
			ok := true
			for _, r := range res {
				ok = ok && withRes[r.c][p]
			}
			if ok {
				provs = append(provs, p)
			}
		}
		var out []oAreq
		for _, p := range provs {
			root := s.Providers[p].Root
			mk := func(anchor int32) oAreq {
				a := oAreq{anchor: anchor, mappings: map[string][]int32{suffix: {p}}}
				for _, r := range res {
					a.rrs = append(a.rrs, oArr{p, r.c, r.amt})
				}
				return a
			}
			if o.inAnchors(root) {
				out = append(out, mk(root))
			}
			if o.sharing[p] {
				for an := range o.anchorsFor(p) {
					if an == root || !o.inAnchors(an) {
						continue
					}
					out = append(out, mk(an))
				}
			}
		}
		return out, nil
	}
	// get_trees_matching_all
	if len(required) > 0 {
		any := false
		for i := range s.Providers {
			for _, anyOf := range required {
				if o.hasAnyT(int32(i), anyOf) {
					any = true
				}
			}
		}
		if !any {
			return nil, nil
		}
	}
	type cand struct{ p, root, c int32 }
	var all map[cand]bool
	var allSet *pyfmt.Set // the same candidates as Python's set, for its order
	for _, r := range res {
		rc := map[cand]bool{}
		rcSet := o.classSet(withRes[r.c], r.c, treeRoot < 0, rpsInAggs)
		for p := range withRes[r.c] {
			rc[cand{p, s.Providers[p].Root, r.c}] = true
		}
		if treeRoot < 0 {
			for p := range withRes[r.c] {
				if !o.sharing[p] || (rpsInAggs != nil && !rpsInAggs[p]) {
					continue
				}
				for an := range o.anchorsFor(p) {
					rc[cand{p, an, r.c}] = true
				}
			}
		}
		for k := range rc {
			if !o.inAnchors(k.root) {
				delete(rc, k)
			} else if rpsInAggs != nil && !rpsInAggs[k.p] && !rpsInAggs[k.root] {
				delete(rc, k)
			} else if badAgg[k.p] || badAgg[k.root] {
				delete(rc, k)
			}
		}
		if o.anchors != nil {
			rcSet = rcSet.Filter(func(k *pyfmt.Tuple) bool { return o.inAnchors(o.byID(k.B)) })
		}
		if rpsInAggs != nil {
			rcSet = rcSet.Filter(func(k *pyfmt.Tuple) bool { return rpsInAggs[o.byID(k.A)] || rpsInAggs[o.byID(k.B)] })
		}
		if len(g.ForbiddenAggs) > 0 {
			rcSet = rcSet.Filter(func(k *pyfmt.Tuple) bool { return !badAgg[o.byID(k.A)] && !badAgg[o.byID(k.B)] })
		}
		if len(rc) == 0 {
			return nil, nil
		}
		if all == nil {
			all, allSet = rc, rcSet
		} else {
			trees := func(m map[cand]bool) map[int32]bool {
				t := map[int32]bool{}
				for k := range m {
					t[k.root] = true
				}
				return t
			}
			t1, t2 := trees(all), trees(rc)
			for k := range rc {
				all[k] = true
			}
			for k := range all {
				if !t1[k.root] || !t2[k.root] {
					delete(all, k)
				}
			}
			allSet.Merge(rcSet)
			allSet = allSet.Filter(func(k *pyfmt.Tuple) bool { return t1[o.byID(k.B)] && t2[o.byID(k.B)] })
		}
		if len(all) == 0 {
			return nil, nil
		}
	}
	// tree_dict's order: roots as they first appear in the set.
	var rootOrder []int32
	allSet.Each(func(k *pyfmt.Tuple) {
		if r := o.byID(k.B); !slices.Contains(rootOrder, r) {
			rootOrder = append(rootOrder, r)
		}
	})
	// _alloc_candidates_multiple_providers
	byTree := map[int32]map[int32][]int32{}
	for k := range all {
		if byTree[k.root] == nil {
			byTree[k.root] = map[int32][]int32{}
		}
		byTree[k.root][k.c] = append(byTree[k.root][k.c], k.p)
	}
	var out []oAreq
	seen := map[string]bool{} // alloc_requests |= ...: equality ignores the anchor
	for _, root := range rootOrder {
		byClass := byTree[root]
		var classes []int32
		for c := range byClass {
			classes = append(classes, c)
		}
		slices.Sort(classes)
		idx := make([]int, len(classes))
		amt := map[int32]int64{}
		for _, r := range res {
			amt[r.c] = r.amt
		}
		for {
			var provs []int32
			ok := true
			traits := map[int32]bool{}
			for k, c := range classes {
				p := byClass[c][idx[k]]
				provs = append(provs, p)
				if badTrait[p] {
					ok = false
				}
				for _, t := range s.Providers[p].Traits {
					traits[t] = true
				}
			}
			for _, anyOf := range required {
				hit := false
				for _, t := range anyOf {
					hit = hit || traits[t]
				}
				ok = ok && hit
			}
			if ok {
				a := oAreq{anchor: root, mappings: map[string][]int32{}}
				for k, c := range classes {
					a.rrs = append(a.rrs, oArr{provs[k], c, amt[c]})
					if !slices.Contains(a.mappings[suffix], provs[k]) {
						a.mappings[suffix] = append(a.mappings[suffix], provs[k])
					}
				}
				rrs := slices.Clone(a.rrs)
				slices.SortFunc(rrs, func(x, y oArr) int { return int(x.prov-y.prov)*1000 + int(x.class-y.class) })
				if key := fmt.Sprint(rrs); !seen[key] {
					seen[key] = true
					out = append(out, a)
				}
			}
			k := len(idx) - 1
			for ; k >= 0; k-- {
				idx[k]++
				if idx[k] < len(byClass[classes[k]]) {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	return out, nil
}
