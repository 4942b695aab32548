package candidates

import "github.com/placement-syncd/placement-syncd/placementsrv/readmodel"

// option is one way to satisfy a group at the current anchor: allocations
// allocBuf[a0:a1] (their slots refBuf[a0:a1]) and mapping providers
// provBuf[p0:p1] (ascending; anchor-local ids in lprovBuf[p0:p1]).
type option struct {
	a0, a1  int32
	p0, p1  int32
	single  int32 // the only provider involved, or -1
	lsingle int32 // its anchor-local id
	// sharedOnly marks an unsuffixed-group option drawn entirely from
	// sharing providers: the same allocations at every anchor they serve,
	// offered at one of them only (see sharedOwners).
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
	inv  *readmodel.SnapInventory
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
	s   *readmodel.Snapshot
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
	perRoot               int // breadth-first: candidates kept (0: all)
	// upstream: visit roots and options in Placement's order (a cap).
	upstream bool
	breadth  bool
	// countCap: breadth-first ranks count the products within capacity
	// (WideTrees), so the search defers the other filters to the leaf.
	countCap bool
	// useUsed is 0 when combined amounts are checked against capacity
	// without usage (WideTrees), 1 otherwise.
	useUsed int64
	rankBy  [][]int32 // per group: provider -> Placement's option order

	// per anchor
	opts     [][]option
	optOrder []int // the groups in the order their options are listed
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
	// breadth-first: this leaf's rank, products counted at this anchor,
	// and the rank from which this anchor's candidates lose.
	curRank, prodCount, rankBound int64

	// output
	emitted int // candidates produced so far
	cands   []Candidate
	meta    []candMeta // per candidate, when withMeta
	// withMeta: breadth-first ranks or pre-1.29 drops under a cap.
	withMeta bool
	// sink, when set, receives each candidate instead of cands (see
	// Query.Stream); cur is the transient candidate handed to it.
	sink        func(*Candidate) bool
	cur         Candidate
	flatMapping [1]int32 // cur's mapping on the flat path (flat.go)
	rootBits    []uint64 // stream: roots of the candidates produced
	// keep, when set, replays and keeps anchors' rendered candidates
	// (kept.go).
	keep     *anchorKeep
	usedBits []uint64 // stream, pre-1.29: providers of those candidates
	dedup    map[string]struct{}
	// owners says which anchor keeps each sharedOnly option (built on
	// first use); anchor is the root whose options are being listed.
	owners *sharedOwners
	// sameFits: Anchor keeps owners (see Query.SameFits).
	sameFits bool
	anchor   int32
	keyBuf   []byte
	// infl replays Placement's in-place folding of amounts (inflate.go);
	// nil when the request cannot trigger it.
	infl     *inflation
	allocOut arena[Alloc]
	mapOut   arena[int32]
	mapsOut  arena[[]int32]
	stopped  bool
}

// Query is a request resolved against a snapshot: name errors are known,
// generation has not started. Run it once, with Find or Stream.
type Query struct {
	e *engine // nil: no candidates
}

// Prepare resolves req against s; an unknown class or trait is a
// *NotFoundError.
func Prepare(s *readmodel.Snapshot, req Request, opt Options) (*Query, error) {
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

// Find computes the allocation candidates for req in s.
func Find(s *readmodel.Snapshot, req Request, opt Options) (Result, error) {
	q, err := Prepare(s, req, opt)
	if err != nil {
		return Result{}, err
	}
	return q.Find(), nil
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
	return !o.Randomize && o.Order == DepthFirst && (q.e.req.Limit == 0 || !q.e.excludeNested) && q.e.infl == nil
}
