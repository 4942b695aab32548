package candidates

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
)

// Kept anchors. A scheduler asks for the same few flavors again and
// again, and between two such requests writes change the usage of a few
// providers only. So a streamed answer keeps, per request shape, each
// anchor's candidates as rendered, with the inventories they were found
// on. A later request of the same shape copies an anchor's bytes while
// every provider the anchor draws from still has those inventories (a
// usage patch gives a provider new ones, see Snapshot.Patched), and
// searches it again otherwise, keeping the new result. A write thus
// costs the next request the anchors it touched.
//
// Only requests whose anchors' candidates do not depend on other anchors
// are kept (anchorLocal). The keeper belongs to one provider table
// (quotedNames): a rebuilt snapshot starts afresh.

const (
	// keptShapes is the number of request shapes kept; the one used
	// longest ago makes room for a new one.
	keptShapes = 8
	// keptBytes bounds what all shapes keep, about 1 KB per anchor: at
	// 100,000 hosts a shape without a limit keeps a part of its anchors.
	keptBytes = 32 << 20
)

// keptAnchor is one anchor's candidates as rendered.
type keptAnchor struct {
	// from identifies the inventories of the providers the anchor draws
	// from: its tree, then the sharing providers it anchors.
	from []*SnapInventory
	json []byte  // the candidates, comma-separated
	ends []int32 // where each candidate ends in json
	// marks are the roots the candidates take from, each with the first
	// candidate that does.
	marks []rootMark
}

// rootMark notes that candidate cand is the first to take from root's
// tree.
type rootMark struct{ root, cand int32 }

// current reports whether ka still holds r's candidates in s.
func (ka *keptAnchor) current(s *Snapshot, r int32) bool {
	p := &s.Providers[r]
	if len(ka.from) != len(p.Tree)+len(p.SharedTo) {
		return false
	}
	for i, q := range p.Tree {
		if firstInventory(s.Inventories(q)) != ka.from[i] {
			return false
		}
	}
	for i, q := range p.SharedTo {
		if firstInventory(s.Inventories(q)) != ka.from[len(p.Tree)+i] {
			return false
		}
	}
	return true
}

// keptShape holds one request shape's anchors, by provider index.
type keptShape struct {
	key     string
	anchors []atomic.Pointer[keptAnchor]
	used    atomic.Int64 // when last used, by the keeper's clock
}

// anchorKeeper holds the kept shapes of one provider table.
type anchorKeeper struct {
	mu     sync.Mutex
	shapes []*keptShape
	clock  int64
	bytes  atomic.Int64
	// replayed counts the anchors answered from what was kept.
	replayed atomic.Int64
}

// shape returns the shape for key, making room for it if it is new.
func (k *anchorKeeper) shape(key string, providers int) *keptShape {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.clock++
	for _, sh := range k.shapes {
		if sh.key == key {
			sh.used.Store(k.clock)
			return sh
		}
	}
	if len(k.shapes) >= keptShapes {
		oldest := 0
		for i, sh := range k.shapes {
			if sh.used.Load() < k.shapes[oldest].used.Load() {
				oldest = i
			}
		}
		k.bytes.Add(-k.shapes[oldest].size())
		k.shapes = slices.Delete(k.shapes, oldest, oldest+1)
	}
	sh := &keptShape{key: key, anchors: make([]atomic.Pointer[keptAnchor], providers)}
	sh.used.Store(k.clock)
	k.shapes = append(k.shapes, sh)
	return sh
}

// size is what a shape keeps, as counted against keptBytes.
func (sh *keptShape) size() int64 {
	var n int64
	for i := range sh.anchors {
		if ka := sh.anchors[i].Load(); ka != nil {
			n += ka.size()
		}
	}
	return n
}

func (ka *keptAnchor) size() int64 {
	return int64(len(ka.json) + 4*len(ka.ends) + 8*len(ka.marks) + 8*len(ka.from) + 128)
}

// anchorLocal reports whether each anchor's candidates depend on that
// anchor alone. Two things look across anchors, and only for candidates
// or options drawn wholly from sharing providers: an unsuffixed-group
// option of sharing providers is offered at one anchor only
// (sharedOwner), and a candidate of sharing providers only is returned
// once (seen). Neither can happen when the unsuffixed group, and some
// group, asks for a class no sharing provider has. Before 1.29 (usedBits)
// the summaries list the providers used, which are not kept.
func (e *engine) anchorLocal() bool {
	if e.usedBits != nil || e.infl != nil {
		return false
	}
	local := false
	for _, g := range e.groups {
		shared := true
		for _, ra := range g.res {
			if !e.s.SharedClass[ra.class] {
				shared = false
				break
			}
		}
		if !g.granular && shared {
			return false
		}
		local = local || !shared
	}
	return local
}

// shapeKey names what a kept anchor's bytes depend on besides the
// snapshot: the request, the microversion and the options.
func shapeKey(req *Request, mv microversion.Version, opt *Options) string {
	return fmt.Sprintf("%s|%#v|%t|%d|%d", mv, *req, opt.NestedAware, opt.MaxCandidates, opt.Order)
}

// streamKept streams q's answer into cj like Stream, replaying and
// keeping anchors with keeper when the query allows it.
func (q *Query) streamKept(cj *candidateJSON, keeper *anchorKeeper, mv microversion.Version) []int32 {
	e := q.e
	if e == nil {
		return nil
	}
	e.startStream(cj.add)
	if e.anchorLocal() {
		k := &anchorKeep{keeper: keeper, cj: cj,
			shape: keeper.shape(shapeKey(e.req, mv, &e.opt), len(e.s.Providers))}
		e.keep, e.sink = k, k.add
		defer func() { keeper.replayed.Add(int64(k.replayed)) }()
	}
	e.run()
	return e.streamedSummaries()
}

// anchorKeep is one streamed answer's use of a shape: it replays kept
// anchors into cj and keeps the anchors searched.
type anchorKeep struct {
	keeper *anchorKeeper
	shape  *keptShape
	cj     *candidateJSON
	// replayed counts this answer's anchors copied from shape.
	replayed int
	// the anchor being searched
	start, n0, swaps int
	comma            bool
	ends             []int32
	marks            []rootMark
}

// replay copies r's kept candidates into the answer, up to the limit,
// reporting whether it had them.
func (k *anchorKeep) replay(e *engine, r int32) bool {
	ka := k.shape.anchors[r].Load()
	if ka == nil || !ka.current(e.s, r) {
		return false
	}
	n := len(ka.ends)
	if e.target > 0 {
		n = min(n, e.target-e.emitted)
	}
	for _, m := range ka.marks {
		if int(m.cand) < n {
			setBit(e.rootBits, m.root)
		}
	}
	e.emitted += n
	k.replayed++
	if !k.cj.appendRendered(ka.json[:ka.ends[n-1]], n) || e.target > 0 && e.emitted >= e.target {
		e.stopped = true
	}
	return true
}

// begin starts keeping the anchor about to be searched.
func (k *anchorKeep) begin(e *engine) {
	k.start, k.n0, k.swaps, k.comma = len(k.cj.b), e.emitted, k.cj.swaps, k.cj.n > 0
	k.ends, k.marks = k.ends[:0], k.marks[:0]
}

// add renders a candidate of the anchor being searched.
func (k *anchorKeep) add(c *Candidate) bool {
	ok := k.cj.add(c)
	k.ends = append(k.ends, int32(len(k.cj.b)-k.start))
	return ok
}

// mark notes that candidate cand (of the answer) takes from root's tree.
func (k *anchorKeep) mark(root int32, cand int) {
	for _, m := range k.marks {
		if m.root == root {
			return
		}
	}
	k.marks = append(k.marks, rootMark{root: root, cand: int32(cand - k.n0)})
}

// end keeps the anchor just searched, unless it produced nothing, was
// cut short, or its bytes were sent on in between.
func (k *anchorKeep) end(e *engine, r int32) {
	if len(k.ends) == 0 || e.stopped || k.cj.swaps != k.swaps || k.cj.err != nil {
		return
	}
	skip := 0
	if k.comma {
		skip = 1
	}
	ka := &keptAnchor{json: slices.Clone(k.cj.b[k.start+skip:]), ends: make([]int32, len(k.ends)),
		marks: slices.Clone(k.marks)}
	for i, end := range k.ends {
		ka.ends[i] = end - int32(skip)
	}
	p := &e.s.Providers[r]
	ka.from = make([]*SnapInventory, 0, len(p.Tree)+len(p.SharedTo))
	for _, q := range p.Tree {
		ka.from = append(ka.from, firstInventory(e.s.Inventories(q)))
	}
	for _, q := range p.SharedTo {
		ka.from = append(ka.from, firstInventory(e.s.Inventories(q)))
	}
	if k.keeper.bytes.Add(ka.size()) > keptBytes {
		k.keeper.bytes.Add(-ka.size())
		return
	}
	if old := k.shape.anchors[r].Swap(ka); old != nil {
		k.keeper.bytes.Add(-old.size())
	}
}
