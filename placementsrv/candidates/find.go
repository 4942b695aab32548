package candidates

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// option is one way to satisfy a group at the current anchor: allocations
// allocBuf[a0:a1] (their slots refBuf[a0:a1]) and mapping providers
// provBuf[p0:p1] (ascending; anchor-local ids in lprovBuf[p0:p1]).
type option struct {
	a0, a1  int32
	p0, p1  int32
	single  int32 // the only provider involved, or -1
	lsingle int32 // its anchor-local id
	// sharedOnly marks an unsuffixed-group option drawn entirely from
	// sharing providers: the same allocations at every anchor they serve.
	sharedOnly bool
	// frozen is the mapping providers copied out of the per-anchor
	// buffer the first time a candidate uses the option.
	frozen []int32
}

// Anchor-local ids: the providers an anchor can draw from (its tree in
// preorder, then the sharing providers it anchors) are numbered from 0,
// and each of their inventories gets a slot, numbered in (provider index,
// class) order, so the search keeps its running totals and marks in small
// dense arrays instead of scanning lists, and reads a candidate's sorted
// allocations off a bitset of the slots in use.

// allocRef locates an option's allocation in the per-anchor arrays.
type allocRef struct {
	slot int32
	inv  *store.SnapInventory
}

// slotUse is the running total taken from one inventory and how many
// chosen options take from it.
type slotUse struct {
	total int64
	users int32
}

// slotInfo names a slot's inventory.
type slotInfo struct {
	prov, class, root int32
}

// provUse counts the chosen options mapping to a provider, and among
// them the granular ones (for group_policy=isolate).
type provUse struct {
	touch, gran int32
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
	refBuf   []allocRef
	lprovBuf []int32
	lists    [][]int32 // unsuffixed group: local providers per class
	odo      []int     // unsuffixed group: odometer over lists
	aprov    []int32   // local id -> provider
	abase    []int32   // local id -> first slot
	nTree    int       // aprov[:nTree] is the anchor's tree

	// search state; every counter is back to zero when a search ends
	chosen    []int32 // option index per depth
	slots     []slotUse
	slotInfo  []slotInfo
	inUse     []uint64  // bitset of the slots with users
	order     []int32   // scratch: local ids by provider index
	puse      []provUse // per local provider
	nonShared int       // mappings to non-sharing providers, with repeats
	rootEmit  int

	// output
	emitted int // candidates produced so far
	cands   []Candidate
	roots   []int32 // anchor of each candidate (round-robin)
	// sink, when set, receives each candidate instead of cands (see
	// Query.Stream); cur is the transient candidate handed to it.
	sink     func(*Candidate) bool
	cur      Candidate
	rootBits []uint64 // stream: roots of the candidates produced
	usedBits []uint64 // stream, pre-1.29: providers of those candidates
	dedup    map[string]struct{}
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
	q, err := Prepare(s, req, opt)
	if err != nil {
		return Result{}, err
	}
	return q.Find(), nil
}

// Query is a request resolved against a snapshot: name errors are known,
// generation has not started. Run it once, with Find or Stream.
type Query struct {
	e *engine // nil: no candidates
}

// Prepare resolves req against s; an unknown class or trait is a
// *NotFoundError.
func Prepare(s *store.Snapshot, req Request, opt Options) (*Query, error) {
	e := &engine{s: s, req: &req, opt: opt}
	ok, err := e.prepare()
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Query{}, nil
	}
	return &Query{e: e}, nil
}

// Find generates, orders and limits the whole answer.
func (q *Query) Find() Result {
	if q.e == nil {
		return Result{}
	}
	q.e.run()
	return q.e.finish()
}

// Streamable reports whether the answer is the candidates in generation
// order, so that Stream can hand them out as they are found: no
// randomization, depth-first order, and a limit only where generation can
// simply stop (summaries before 1.29 depend on every candidate).
func (q *Query) Streamable() bool {
	if q.e == nil {
		return true
	}
	o := q.e.opt
	return !o.Randomize && o.Order == DepthFirst && (q.e.req.Limit == 0 || !q.e.excludeNested)
}

// Stream calls fn with each candidate of a Streamable query in answer
// order, without keeping them; the candidate and its slices are only
// valid during the call. fn returning false stops generation. Stream
// returns the provider summaries of what it produced, as Result.Summaries.
func (q *Query) Stream(fn func(*Candidate) bool) []int32 {
	e := q.e
	if e == nil {
		return nil
	}
	n := (len(e.s.Providers) + 63) / 64
	e.sink, e.rootBits = fn, make([]uint64, n)
	if e.excludeNested {
		e.usedBits = make([]uint64, n)
	}
	e.cur.Mappings = make([][]int32, len(e.groups))
	e.run()
	n = 0
	for w, word := range e.rootBits {
		for ; word != 0; word &= word - 1 {
			n += len(e.s.Providers[w*64+bits.TrailingZeros64(word)].Tree)
		}
	}
	sums := make([]int32, 0, n)
	for w, word := range e.rootBits {
		for ; word != 0; word &= word - 1 {
			r := int32(w*64 + bits.TrailingZeros64(word))
			for _, p := range e.s.Providers[r].Tree {
				if e.usedBits == nil || bitSet(e.usedBits, p) {
					sums = append(sums, p)
				}
			}
		}
	}
	return sums
}

func bitSet(b []uint64, i int32) bool { return b[i/64]&(1<<(i%64)) != 0 }

func setBit(b []uint64, i int32) { b[i/64] |= 1 << (i % 64) }

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

// enterAnchor numbers the providers anchor r can draw from and their
// inventories, and empties the option buffers.
func (e *engine) enterAnchor(r int32) {
	ps := e.s.Providers
	e.allocBuf, e.refBuf, e.provBuf, e.lprovBuf = e.allocBuf[:0], e.refBuf[:0], e.provBuf[:0], e.lprovBuf[:0]
	e.aprov = append(append(e.aprov[:0], ps[r].Tree...), ps[r].SharedTo...)
	e.nTree = len(ps[r].Tree)
	// Slots follow provider index order, whatever the local order.
	e.order = e.order[:0]
	for lp, p := range e.aprov {
		e.order = append(e.order, int32(lp))
		for j := len(e.order) - 1; j > 0 && e.aprov[e.order[j-1]] > p; j-- {
			e.order[j], e.order[j-1] = e.order[j-1], e.order[j]
		}
	}
	e.abase = append(e.abase[:0], e.order...) // sized; filled below
	e.slotInfo = e.slotInfo[:0]
	for _, lp := range e.order {
		p := e.aprov[lp]
		e.abase[lp] = int32(len(e.slotInfo))
		invs, root := ps[p].Inventories, ps[p].Root
		for k := range invs {
			e.slotInfo = append(e.slotInfo, slotInfo{p, invs[k].Class, root})
		}
	}
	n := len(e.slotInfo)
	if n > len(e.slots) {
		e.slots = append(e.slots, make([]slotUse, n-len(e.slots))...)
	}
	if w := (n + 63) / 64; w > len(e.inUse) {
		e.inUse = append(e.inUse, make([]uint64, w-len(e.inUse))...)
	}
	if len(e.aprov) > len(e.puse) {
		e.puse = append(e.puse, make([]provUse, len(e.aprov)-len(e.puse))...)
	}
}

// addAlloc appends an allocation of lp's inventory k to the option
// buffers.
func (e *engine) addAlloc(lp int32, k int, class int32, amount int64) {
	p := e.aprov[lp]
	e.allocBuf = append(e.allocBuf, Alloc{p, class, amount})
	e.refBuf = append(e.refBuf, allocRef{e.abase[lp] + int32(k), &e.s.Providers[p].Inventories[k]})
}

// inventory returns p's inventory of class c and its position, or -1.
func inventory(p *store.SnapProvider, c int32) (*store.SnapInventory, int) {
	inv := p.Inventories
	for i := range inv {
		if inv[i].Class == c {
			return &inv[i], i
		}
		if inv[i].Class > c {
			break
		}
	}
	return nil, -1
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

// narrowAnchors returns the only roots that can anchor a candidate when
// some group's member_of or in_tree confines it (nil: any root). A group
// with member_of only has options under the roots of its member
// providers and the roots its sharing members anchor; with in_tree, under
// that tree's root and the roots its sharing providers anchor.
func (e *engine) narrowAnchors() []int32 {
	ps := e.s.Providers
	var cur []int32 // sorted roots allowed so far; nil: no restriction yet
	restricted := false
	reach := func(out []int32, p int32) []int32 {
		out = append(out, ps[p].Root)
		if ps[p].Sharing {
			out = append(out, ps[p].Anchors...)
		}
		return out
	}
	restrict := func(next []int32) {
		slices.Sort(next)
		next = slices.Compact(next)
		if !restricted {
			cur, restricted = next, true
			return
		}
		kept := cur[:0]
		for _, r := range cur {
			if _, ok := slices.BinarySearch(next, r); ok {
				kept = append(kept, r)
			}
		}
		cur = kept
	}
	for _, g := range e.groups {
		if g.memberOf != nil {
			next := make([]int32, 0, len(g.memberOf))
			for _, p := range g.memberOf {
				next = reach(next, p)
			}
			restrict(next)
		}
		if g.inTree >= 0 && len(g.res) > 0 {
			var next []int32
			for _, p := range ps[g.inTree].Tree {
				next = reach(next, p)
			}
			restrict(next)
		}
	}
	if !restricted {
		return nil
	}
	if cur == nil {
		cur = []int32{}
	}
	return cur
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
		e.enterAnchor(r)
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
	for lp, p := range e.aprov {
		// in_tree limits where resources come from; a resourceless group
		// ignores it, as Placement does.
		if len(g.res) > 0 && g.inTree >= 0 && ps[p].Root != g.inTree {
			continue
		}
		if !g.matchSingle(&ps[p], p) {
			continue
		}
		o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: p, lsingle: int32(lp)}
		for _, ra := range g.res {
			_, k := inventory(&ps[p], ra.class)
			e.addAlloc(int32(lp), k, ra.class, ra.amount)
		}
		e.provBuf = append(e.provBuf, p)
		e.lprovBuf = append(e.lprovBuf, int32(lp))
		o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
		out = append(out, o)
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
	nProv := len(e.aprov)
	if g.inTree >= 0 {
		nProv = e.nTree
	}
	// A required trait that no provider here has rules the anchor out
	// before any per-class list is built.
	for _, anyOf := range g.required {
		held := false
		for _, p := range e.aprov[:nProv] {
			if hasAny(&ps[p], anyOf) {
				held = true
				break
			}
		}
		if !held {
			return out
		}
	}
	for k, ra := range g.res {
		l := lists[k][:0]
		for lp, p := range e.aprov[:nProv] {
			pp := &ps[p]
			inv := pp.Inventory(ra.class)
			if inv == nil || !fits(inv, ra.amount) || hasAny(pp, g.forbid) || inAny(pp, g.badAggs) {
				continue
			}
			// Tree members pass member_of through their root; sharing
			// providers must be members themselves.
			if (lp >= e.nTree || !rootMember) && !g.member(p) {
				continue
			}
			l = append(l, int32(lp))
		}
		lists[k] = l
		if len(l) == 0 {
			return out
		}
	}
	// Odometer over the per-class lists.
	idx := e.odo[:0]
	for range lists {
		idx = append(idx, 0)
	}
	e.odo = idx
	for {
		if e.requiredTogether(g, lists, idx) {
			out = e.addTreeOption(g, lists, idx, out)
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

// addTreeOption appends the unsuffixed group's option taking class k from
// local provider lists[k][idx[k]], unless it is a sharing-only one another
// anchor already used.
func (e *engine) addTreeOption(g *group, lists [][]int32, idx []int, out []option) []option {
	ps := e.s.Providers
	lp0 := lists[0][idx[0]]
	o := option{a0: int32(len(e.allocBuf)), p0: int32(len(e.provBuf)), single: e.aprov[lp0], lsingle: lp0}
	for k, ra := range g.res {
		lp := lists[k][idx[k]]
		p := e.aprov[lp]
		_, pos := inventory(&ps[p], ra.class)
		e.addAlloc(lp, pos, ra.class, ra.amount)
		if lp != lp0 {
			o.single, o.lsingle = -1, -1
		}
		if !slices.Contains(e.lprovBuf[o.p0:], lp) {
			// Keep the mapping ascending by provider as it grows.
			e.provBuf = append(e.provBuf, p)
			e.lprovBuf = append(e.lprovBuf, lp)
			for j := len(e.provBuf) - 1; j > int(o.p0) && e.provBuf[j] < e.provBuf[j-1]; j-- {
				e.provBuf[j], e.provBuf[j-1] = e.provBuf[j-1], e.provBuf[j]
				e.lprovBuf[j], e.lprovBuf[j-1] = e.lprovBuf[j-1], e.lprovBuf[j]
			}
		}
	}
	o.a1, o.p1 = int32(len(e.allocBuf)), int32(len(e.provBuf))
	o.sharedOnly = true
	for _, p := range e.provBuf[o.p0:o.p1] {
		o.sharedOnly = o.sharedOnly && ps[p].Sharing
	}
	if o.sharedOnly && e.sharedClaimed[e.optionKey(&o)] {
		e.allocBuf, e.refBuf = e.allocBuf[:o.a0], e.refBuf[:o.a0]
		e.provBuf, e.lprovBuf = e.provBuf[:o.p0], e.lprovBuf[:o.p0]
		return out
	}
	return append(out, o)
}

// requiredTogether checks the group's required traits against the union
// of the traits of the chosen providers.
func (e *engine) requiredTogether(g *group, lists [][]int32, idx []int) bool {
	ps := e.s.Providers
	for _, anyOf := range g.required {
		ok := false
		for k := range lists {
			if hasAny(&ps[e.aprov[lists[k][idx[k]]]], anyOf) {
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
	isolate := e.isolate && g.granular
	var failedBuf [8]int32
	failed := failedBuf[:0]
	for i := range opts {
		o := &opts[i]
		if isolate && e.puse[o.lsingle].gran > 0 {
			continue
		}
		twin := int32(-1)
		if o.single >= 0 && e.puse[o.lsingle].touch == 0 {
			twin = ps[o.single].Twin
			if slices.Contains(failed, twin) {
				continue
			}
		}
		if !e.take(o) {
			continue
		}
		e.touch(o, 1)
		if g.granular {
			e.puse[o.lsingle].gran++
		}
		e.chosen[d] = int32(i)
		before := e.emitted
		stop := false
		if e.sameSubtreeOK(d) {
			stop = e.search(d+1, r)
		}
		if g.granular {
			e.puse[o.lsingle].gran--
		}
		e.touch(o, -1)
		e.release(o, o.a1-o.a0)
		if o.sharedOnly && e.emitted > before {
			e.claimShared(o)
		}
		if stop {
			return true
		}
		if twin >= 0 && e.emitted == before {
			failed = append(failed, twin)
		}
	}
	return false
}

// touch counts (delta 1) or uncounts (-1) an option's mapping providers.
func (e *engine) touch(o *option, delta int32) {
	ps := e.s.Providers
	for j := o.p0; j < o.p1; j++ {
		e.puse[e.lprovBuf[j]].touch += delta
		if !ps[e.provBuf[j]].Sharing {
			e.nonShared += int(delta)
		}
	}
}

// take adds an option's allocations to the running totals, checking the
// combined amount against capacity and max_unit; on failure nothing is
// taken.
func (e *engine) take(o *option) bool {
	allocs := e.allocBuf[o.a0:o.a1]
	for k := range allocs {
		ref := &e.refBuf[int(o.a0)+k]
		su := &e.slots[ref.slot]
		total := su.total + allocs[k].Amount
		if ref.inv.Used+total > ref.inv.Capacity || total > ref.inv.MaxUnit {
			e.release(o, int32(k))
			return false
		}
		su.total = total
		if su.users == 0 {
			e.inUse[ref.slot/64] |= 1 << (ref.slot % 64)
		}
		su.users++
	}
	return true
}

// release gives back the first n allocations of o.
func (e *engine) release(o *option, n int32) {
	for k := o.a0 + n - 1; k >= o.a0; k-- {
		su := &e.slots[e.refBuf[k].slot]
		su.total -= e.allocBuf[k].Amount
		if su.users--; su.users == 0 {
			e.inUse[e.refBuf[k].slot/64] &^= 1 << (e.refBuf[k].slot % 64)
		}
	}
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
	allocs := e.cur.Allocs[:0]
	for w, word := range e.inUse[:(len(e.slotInfo)+63)/64] {
		for ; word != 0; word &= word - 1 {
			slot := w*64 + bits.TrailingZeros64(word)
			si := e.slotInfo[slot]
			allocs = append(allocs, Alloc{si.prov, si.class, e.slots[slot].total})
		}
	}
	e.cur.Allocs = allocs
	if e.excludeNested {
		for i := range allocs {
			for j := range i {
				if allocs[i].Provider != allocs[j].Provider && ps[allocs[i].Provider].Root == ps[allocs[j].Provider].Root {
					return false
				}
			}
		}
	}
	// Only a candidate made entirely of sharing providers can come up
	// again under another anchor; Placement returns it once.
	if e.nonShared == 0 && e.seen(allocs) {
		return false
	}
	e.emitted++
	if e.sink != nil {
		return e.emitTo()
	}
	allocs = e.allocOut.take(len(allocs))
	copy(allocs, e.cur.Allocs)
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

// emitTo hands the candidate in e.cur to the sink.
func (e *engine) emitTo() bool {
	for d := range e.groups {
		o := &e.opts[d][e.chosen[d]]
		e.cur.Mappings[d] = e.provBuf[o.p0:o.p1:o.p1]
	}
	marked := int32(-1)
	for w, word := range e.inUse[:(len(e.slotInfo)+63)/64] {
		for ; word != 0; word &= word - 1 {
			si := &e.slotInfo[w*64+bits.TrailingZeros64(word)]
			if si.root != marked {
				setBit(e.rootBits, si.root)
				marked = si.root
			}
			if e.usedBits != nil {
				setBit(e.usedBits, si.prov)
			}
		}
	}
	if !e.sink(&e.cur) || e.target > 0 && e.emitted >= e.target {
		e.stopped = true
		return true
	}
	return false
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
