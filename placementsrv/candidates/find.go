package candidates

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// option is one way to satisfy a group at the current anchor: allocations
// allocBuf[a0:a1] and mapping providers provBuf[p0:p1] (ascending).
type option struct {
	a0, a1 int32
	p0, p1 int32
	single int32 // the only provider involved, or -1
	// sharedOnly marks an unsuffixed-group option drawn entirely from
	// sharing providers: the same allocations at every anchor they serve.
	sharedOnly bool
	// frozen is the mapping providers copied out of the per-anchor
	// buffer the first time a candidate uses the option.
	frozen []int32
}

// consEntry is the running total taken from one (provider, class).
type consEntry struct {
	prov, class int32
	total       int64
}

// undoRec restores a consEntry total.
type undoRec struct {
	idx   int32
	total int64
}

// engine is the state of one Find call.
type engine struct {
	s   *store.Snapshot
	req *Request
	opt Options

	groups   []*group
	isolate  bool
	subtrees [][]int // per depth: indexes into sets completing there
	sets     [][]int // same_subtree sets as group positions
	// anchor filter from root_required
	anchorReq, anchorForb []int32
	excludeNested         bool
	target                int // stop generating at this many (0: never)
	perRoot               int // per-anchor cap (round-robin), 0: none

	// per anchor
	opts     [][]option
	allocBuf []Alloc
	provBuf  []int32
	lists    [][]int32 // unsuffixed group: providers per class

	// search state
	chosen   []int32 // option index per depth
	cons     []consEntry
	undo     []undoRec
	touched  []int32
	granProv []int32
	rootEmit int

	// output
	cands []Candidate
	roots []int32 // anchor of each candidate (round-robin)
	dedup map[string]struct{}
	// sharedClaimed holds the sharedOnly options of the unsuffixed group
	// that an anchor has already used (see claimShared).
	sharedClaimed map[string]bool
	keyBuf        []byte
	allocOut      arena[Alloc]
	mapOut        arena[int32]
	mapsOut       arena[[]int32]
	stopped       bool
}

// Find computes the allocation candidates for req in s.
func Find(s *store.Snapshot, req Request, opt Options) (Result, error) {
	e := &engine{s: s, req: &req, opt: opt}
	ok, err := e.prepare()
	if err != nil || !ok {
		return Result{}, err
	}
	e.run()
	return e.finish(), nil
}

// prepare resolves the request; false means no candidates.
func (e *engine) prepare() (bool, error) {
	s, req := e.s, e.req
	if len(req.RootRequired)+len(req.RootForbidden) > 0 {
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
		found := false
		for _, r := range s.Roots {
			if e.anchorOK(r) {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	for i := range req.Groups {
		g, out, err := resolveGroup(s, i, &req.Groups[i])
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
	if len(e.groups) == 0 {
		return false, nil
	}
	e.isolate = req.GroupPolicy == PolicyIsolate
	e.excludeNested = !e.opt.NestedAware && s.HasTrees
	pos := map[string]int{}
	for i, g := range e.groups {
		pos[g.suffix] = i
	}
	e.subtrees = make([][]int, len(e.groups))
	e.sets = e.sets[:0]
	for _, set := range req.SameSubtree {
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
	e.target = e.opt.MaxCandidates
	if req.Limit > 0 && !e.opt.Randomize && !e.excludeNested {
		if e.target == 0 || req.Limit < e.target {
			e.target = req.Limit
		}
	}
	if e.opt.Order == RoundRobin {
		e.perRoot, e.target = e.target, 0
	}
	e.opts = make([][]option, len(e.groups))
	e.chosen = make([]int32, len(e.groups))
	return true, nil
}

// anchorOK applies root_required to a root.
func (e *engine) anchorOK(r int32) bool {
	p := &e.s.Providers[r]
	return hasAll(p, e.anchorReq) && !hasAny(p, e.anchorForb)
}

// anywhere reports whether g has an option at any anchor.
func (e *engine) anywhere(g *group) bool {
	for _, r := range e.s.Roots {
		if !e.anchorOK(r) {
			continue
		}
		e.allocBuf, e.provBuf = e.allocBuf[:0], e.provBuf[:0]
		if len(e.options(g, r, nil)) > 0 {
			return true
		}
	}
	return false
}

// narrowAnchors returns the only roots that can anchor a candidate when
// some group's member_of or in_tree confines it (nil: any root). A group
// with member_of only has options under the roots of its member
// providers and the roots its sharing members anchor; with in_tree, under
// that tree's root and the roots its sharing providers anchor.
func (e *engine) narrowAnchors() []int32 {
	ps := e.s.Providers
	var cur map[int32]bool
	restrict := func(next map[int32]bool) {
		if cur == nil {
			cur = next
			return
		}
		for r := range cur {
			if !next[r] {
				delete(cur, r)
			}
		}
	}
	reach := func(out map[int32]bool, p int32) {
		out[ps[p].Root] = true
		if ps[p].Sharing {
			for _, a := range ps[p].Anchors {
				out[a] = true
			}
		}
	}
	for _, g := range e.groups {
		if g.memberOf != nil {
			next := map[int32]bool{}
			for p := range g.memberOf {
				reach(next, p)
			}
			restrict(next)
		}
		if g.inTree >= 0 && len(g.res) > 0 {
			next := map[int32]bool{}
			for _, p := range ps[g.inTree].Tree {
				reach(next, p)
			}
			restrict(next)
		}
	}
	if cur == nil {
		return nil
	}
	out := make([]int32, 0, len(cur))
	for r := range cur {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// run generates candidates anchor by anchor.
func (e *engine) run() {
	roots := e.s.Roots
	if narrow := e.narrowAnchors(); narrow != nil {
		roots = narrow
	}
	for _, r := range roots {
		if e.stopped {
			return
		}
		if !e.anchorOK(r) {
			continue
		}
		e.allocBuf, e.provBuf = e.allocBuf[:0], e.provBuf[:0]
		viable := true
		for i, g := range e.groups {
			e.opts[i] = e.options(g, r, e.opts[i][:0])
			if len(e.opts[i]) == 0 {
				viable = false
				break
			}
		}
		if !viable {
			continue
		}
		e.rootEmit = 0
		e.cons, e.undo, e.touched, e.granProv = e.cons[:0], e.undo[:0], e.touched[:0], e.granProv[:0]
		e.search(0, r)
	}
}

// options lists g's options at anchor r into out.
func (e *engine) options(g *group, r int32, out []option) []option {
	if g.granular {
		return e.singleOptions(g, r, out)
	}
	return e.treeOptions(g, r, out)
}

// singleOptions: one provider satisfies the whole group; it is in r's tree
// or is a sharing provider r anchors.
func (e *engine) singleOptions(g *group, r int32, out []option) []option {
	ps := e.s.Providers
	// in_tree limits where resources come from; a resourceless group
	// ignores it, as Placement does.
	treeOK := func(p int32) bool { return len(g.res) == 0 || g.inTree < 0 || ps[p].Root == g.inTree }
	add := func(p int32) {
		o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: p}
		for _, ra := range g.res {
			e.allocBuf = append(e.allocBuf, Alloc{p, ra.class, ra.amount})
		}
		e.provBuf = append(e.provBuf, p)
		o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
		out = append(out, o)
	}
	for _, p := range ps[r].Tree {
		if treeOK(p) && g.matchSingle(&ps[p], p) {
			add(p)
		}
	}
	for _, p := range ps[r].SharedTo {
		if treeOK(p) && g.matchSingle(&ps[p], p) {
			add(p)
		}
	}
	return out
}

// treeOptions: the unsuffixed group, each class from any provider of r's
// tree or a sharing provider r anchors; traits are required of the chosen
// providers together.
func (e *engine) treeOptions(g *group, r int32, out []option) []option {
	ps := e.s.Providers
	if g.inTree >= 0 && r != g.inTree {
		return out
	}
	root := &ps[r]
	rootMember := g.memberOf != nil && g.member(r)
	if inAny(root, g.badAggs) {
		return out
	}
	for len(e.lists) < len(g.res) {
		e.lists = append(e.lists, nil)
	}
	lists := e.lists[:len(g.res)]
	for k, ra := range g.res {
		l := lists[k][:0]
		for _, p := range root.Tree {
			pp := &ps[p]
			inv := pp.Inventory(ra.class)
			if inv == nil || !fits(inv, ra.amount) || hasAny(pp, g.forbid) || inAny(pp, g.badAggs) {
				continue
			}
			if !rootMember && !g.member(p) {
				continue
			}
			l = append(l, p)
		}
		if g.inTree < 0 {
			for _, p := range root.SharedTo {
				pp := &ps[p]
				inv := pp.Inventory(ra.class)
				if inv == nil || !fits(inv, ra.amount) || hasAny(pp, g.forbid) || inAny(pp, g.badAggs) || !g.member(p) {
					continue
				}
				l = append(l, p)
			}
		}
		lists[k] = l
		if len(l) == 0 {
			return out
		}
	}
	// Odometer over the per-class lists.
	idx := make([]int, len(lists))
	for {
		if e.requiredTogether(g, lists, idx) {
			o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: lists[0][idx[0]]}
			for k, ra := range g.res {
				p := lists[k][idx[k]]
				e.allocBuf = append(e.allocBuf, Alloc{p, ra.class, ra.amount})
				if p != o.single {
					o.single = -1
				}
				if !slices.Contains(e.provBuf[o.p0:], p) {
					e.provBuf = append(e.provBuf, p)
				}
			}
			slices.Sort(e.provBuf[o.p0:])
			o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
			o.sharedOnly = true
			for _, p := range e.provBuf[o.p0:o.p1] {
				o.sharedOnly = o.sharedOnly && ps[p].Sharing
			}
			if o.sharedOnly && e.sharedClaimed[e.optionKey(&o)] {
				e.allocBuf, e.provBuf = e.allocBuf[:o.a0], e.provBuf[:o.p0]
			} else {
				out = append(out, o)
			}
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < len(lists[k]) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return out
		}
	}
}

// requiredTogether checks the group's required traits against the union
// of the traits of the chosen providers.
func (e *engine) requiredTogether(g *group, lists [][]int32, idx []int) bool {
	ps := e.s.Providers
	for _, anyOf := range g.required {
		ok := false
		for k := range lists {
			if hasAny(&ps[lists[k][idx[k]]], anyOf) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// search assigns an option to the group at depth d and recurses. It
// returns true when generation must stop for this anchor.
func (e *engine) search(d int, r int32) bool {
	if d == len(e.groups) {
		return e.emit(r)
	}
	g := e.groups[d]
	opts := e.opts[d]
	ps := e.s.Providers
	var failedBuf [8]int32
	failed := failedBuf[:0]
	for i := range opts {
		o := &opts[i]
		if e.isolate && g.granular && slices.Contains(e.granProv, o.single) {
			continue
		}
		twin := int32(-1)
		if o.single >= 0 && !slices.Contains(e.touched, o.single) {
			twin = ps[o.single].Twin
			if slices.Contains(failed, twin) {
				continue
			}
		}
		mark := len(e.undo)
		consLen := len(e.cons)
		if !e.take(o) {
			e.release(mark, consLen)
			continue
		}
		tLen := len(e.touched)
		e.touched = append(e.touched, e.provBuf[o.p0:o.p1]...)
		if g.granular {
			e.granProv = append(e.granProv, o.single)
		}
		e.chosen[d] = int32(i)
		before := len(e.cands)
		stop := false
		if e.sameSubtreeOK(d) {
			stop = e.search(d+1, r)
		}
		e.touched = e.touched[:tLen]
		if g.granular {
			e.granProv = e.granProv[:len(e.granProv)-1]
		}
		e.release(mark, consLen)
		if o.sharedOnly && len(e.cands) > before {
			e.claimShared(o)
		}
		if stop {
			return true
		}
		if twin >= 0 && len(e.cands) == before {
			failed = append(failed, twin)
		}
	}
	return false
}

// take adds an option's allocations to the running totals, checking the
// combined amount against capacity and max_unit.
func (e *engine) take(o *option) bool {
	for _, a := range e.allocBuf[o.a0:o.a1] {
		j := -1
		for k := range e.cons {
			if e.cons[k].prov == a.Provider && e.cons[k].class == a.Class {
				j = k
				break
			}
		}
		total := a.Amount
		if j >= 0 {
			total += e.cons[j].total
		}
		inv := e.s.Providers[a.Provider].Inventory(a.Class)
		if inv.Used+total > inv.Capacity || total > inv.MaxUnit {
			return false
		}
		if j >= 0 {
			e.undo = append(e.undo, undoRec{int32(j), e.cons[j].total})
			e.cons[j].total = total
		} else {
			e.cons = append(e.cons, consEntry{a.Provider, a.Class, total})
		}
	}
	return true
}

// release undoes take back to the marks.
func (e *engine) release(mark, consLen int) {
	for i := len(e.undo) - 1; i >= mark; i-- {
		u := e.undo[i]
		e.cons[u.idx].total = u.total
	}
	e.undo = e.undo[:mark]
	e.cons = e.cons[:consLen]
}

// sameSubtreeOK checks the same_subtree sets completed at depth d: one of
// the providers of the set's groups must be an ancestor-or-self of all.
func (e *engine) sameSubtreeOK(d int) bool {
	for _, si := range e.subtrees[d] {
		set := e.sets[si]
		var buf [16]int32
		provs := buf[:0]
		for _, gi := range set {
			o := &e.opts[gi][e.chosen[gi]]
			for _, p := range e.provBuf[o.p0:o.p1] {
				if !slices.Contains(provs, p) {
					provs = append(provs, p)
				}
			}
		}
		if !e.hasCommonTop(provs) {
			return false
		}
	}
	return true
}

func (e *engine) hasCommonTop(provs []int32) bool {
	if len(provs) <= 1 {
		return true
	}
	ps := e.s.Providers
top:
	for _, t := range provs {
		for _, q := range provs {
			for q != t && q >= 0 {
				q = ps[q].Parent
			}
			if q != t {
				continue top
			}
		}
		return true
	}
	return false
}

// emit records the current complete assignment as a candidate. It
// returns true when generation must stop for this anchor.
func (e *engine) emit(r int32) bool {
	ps := e.s.Providers
	cons := e.cons
	if e.excludeNested {
		for i := range cons {
			for j := range i {
				if cons[i].prov != cons[j].prov && ps[cons[i].prov].Root == ps[cons[j].prov].Root {
					return false
				}
			}
		}
	}
	allocs := e.allocOut.take(len(cons))
	for i, c := range cons {
		allocs[i] = Alloc{c.prov, c.class, c.total}
	}
	for i := 1; i < len(allocs); i++ {
		for j := i; j > 0 && allocLess(allocs[j], allocs[j-1]); j-- {
			allocs[j], allocs[j-1] = allocs[j-1], allocs[j]
		}
	}
	// Only a candidate made entirely of sharing providers can come up
	// again under another anchor; Placement returns it once.
	shared := true
	for _, p := range e.touched {
		if !ps[p].Sharing {
			shared = false
			break
		}
	}
	if shared && e.seen(allocs) {
		e.allocOut.giveBack(len(allocs))
		return false
	}
	maps := e.mapsOut.take(len(e.groups))
	for d := range e.groups {
		o := &e.opts[d][e.chosen[d]]
		if o.frozen == nil {
			o.frozen = e.mapOut.take(int(o.p1 - o.p0))
			copy(o.frozen, e.provBuf[o.p0:o.p1])
		}
		maps[d] = o.frozen
	}
	e.cands = append(e.cands, Candidate{Allocs: allocs, Mappings: maps})
	e.roots = append(e.roots, r)
	e.rootEmit++
	if e.target > 0 && len(e.cands) >= e.target {
		e.stopped = true
		return true
	}
	return e.perRoot > 0 && e.rootEmit >= e.perRoot
}

func allocLess(a, b Alloc) bool {
	return a.Provider < b.Provider || a.Provider == b.Provider && a.Class < b.Class
}

// seen reports whether an identical candidate (allocations and mappings)
// was already recorded, recording it otherwise.
func (e *engine) seen(allocs []Alloc) bool {
	k := e.keyBuf[:0]
	for _, a := range allocs {
		k = strconv.AppendInt(k, int64(a.Provider), 36)
		k = append(k, ':')
		k = strconv.AppendInt(k, int64(a.Class), 36)
		k = append(k, ':')
		k = strconv.AppendInt(k, a.Amount, 36)
		k = append(k, ',')
	}
	for d := range e.groups {
		k = append(k, '|')
		o := &e.opts[d][e.chosen[d]]
		for _, p := range e.provBuf[o.p0:o.p1] {
			k = strconv.AppendInt(k, int64(p), 36)
			k = append(k, ',')
		}
	}
	e.keyBuf = k
	if e.dedup == nil {
		e.dedup = map[string]struct{}{}
	}
	if _, dup := e.dedup[string(k)]; dup {
		return true
	}
	e.dedup[string(k)] = struct{}{}
	return false
}

// finish orders, limits and summarizes the generated candidates.
func (e *engine) finish() Result {
	cands := e.cands
	if e.opt.Order == RoundRobin {
		cands = e.interleave()
	}
	s := e.s
	var used []uint64 // providers taking part in any candidate (pre-1.29)
	if e.excludeNested {
		used = make([]uint64, (len(s.Providers)+63)/64)
		for _, c := range cands {
			for _, a := range c.Allocs {
				used[a.Provider/64] |= 1 << (a.Provider % 64)
			}
		}
	}
	if n := e.req.Limit; n > 0 && n < len(cands) {
		if e.opt.Randomize {
			for i := 0; i < n; i++ {
				j := i + e.intN(len(cands)-i)
				cands[i], cands[j] = cands[j], cands[i]
			}
		}
		cands = cands[:n]
	} else if e.opt.Randomize {
		for i := len(cands) - 1; i > 0; i-- {
			j := e.intN(i + 1)
			cands[i], cands[j] = cands[j], cands[i]
		}
	}
	var roots []int32
	for _, c := range cands {
		for _, a := range c.Allocs {
			roots = append(roots, s.Providers[a.Provider].Root)
		}
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	var sums []int32
	for _, r := range roots {
		for _, p := range s.Providers[r].Tree {
			if used == nil || used[p/64]&(1<<(p%64)) != 0 {
				sums = append(sums, p)
			}
		}
	}
	return Result{Candidates: cands, Summaries: sums}
}

// interleave reorders candidates round-robin across their anchors and
// applies the cap.
func (e *engine) interleave() []Candidate {
	type span struct{ next, end int }
	var spans []span
	for i := 0; i < len(e.cands); {
		j := i + 1
		for j < len(e.cands) && e.roots[j] == e.roots[i] {
			j++
		}
		spans = append(spans, span{i, j})
		i = j
	}
	out := make([]Candidate, 0, len(e.cands))
	for len(out) < len(e.cands) {
		for k := range spans {
			if spans[k].next < spans[k].end {
				out = append(out, e.cands[spans[k].next])
				spans[k].next++
			}
		}
	}
	if e.perRoot > 0 && len(out) > e.perRoot {
		out = out[:e.perRoot]
	}
	return out
}

func (e *engine) intN(n int) int {
	if e.opt.Rand != nil {
		return e.opt.Rand.IntN(n)
	}
	return rand.IntN(n)
}

// claimShared records that the current anchor used a sharedOnly option.
//
// Placement 8.0.0 collects the unsuffixed group's allocation requests for
// all anchors in one set whose equality ignores the anchor, so a request
// served only by sharing providers survives for a single anchor and is
// combined with the other groups there alone. Keeping the first anchor
// (in root order) that yields a candidate with it gives the same number
// of candidates; which anchor upstream keeps depends on Python's set
// iteration order, so it may differ.
func (e *engine) claimShared(o *option) {
	if e.sharedClaimed == nil {
		e.sharedClaimed = map[string]bool{}
	}
	e.sharedClaimed[e.optionKey(o)] = true
}

// optionKey identifies an option by its allocations.
func (e *engine) optionKey(o *option) string {
	b := make([]byte, 0, 24*int(o.a1-o.a0))
	for _, a := range e.allocBuf[o.a0:o.a1] {
		b = strconv.AppendInt(b, int64(a.Provider), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(a.Class), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, a.Amount, 10)
		b = append(b, ';')
	}
	return string(b)
}
