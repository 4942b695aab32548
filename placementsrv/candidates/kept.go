package candidates

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
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
	// keptBytes bounds what a shape keeps, 0.3 to 1 KB per anchor: the
	// answers to a limit of a few thousand.
	keptBytes = 4 << 20
)

// keptBlock holds what one answer kept: the rendered candidates of its
// kept anchors (and what lies between them) and their tables. Kept
// anchors are ranges of a block, so an answer keeps its anchors in a few
// allocations; a block lives while one of its anchors is kept.
type keptBlock struct {
	json  []byte
	ends  []int32 // where each candidate ends, from its anchor's start
	marks []rootMark
	// provs are, per anchor, the providers it draws from (its tree, then
	// the sharing providers it anchors) and from identifies their
	// inventories.
	provs []int32
	from  []*readmodel.SnapInventory
}

// keptAnchor is one anchor's candidates as rendered: ranges of its block.
// A partial one holds the anchor's first candidates only, those before a
// limit stopped the search.
type keptAnchor struct {
	b                       *keptBlock
	json, ends, marks, from span
	partial                 bool
}

// span is the range [lo, hi) of a block's slice.
type span struct{ lo, hi int32 }

func spanOf(lo, hi int) span { return span{int32(lo), int32(hi)} }

// rootMark notes that candidate cand (of its anchor) is the first to take
// from root's tree.
type rootMark struct{ root, cand int32 }

// current reports whether ka still holds its anchor's candidates in s,
// a snapshot of the keeper's provider table.
func (ka *keptAnchor) current(s *readmodel.Snapshot) bool {
	from := ka.b.from[ka.from.lo:ka.from.hi]
	for i, q := range ka.b.provs[ka.from.lo:ka.from.hi] {
		if firstInventory(s.Inventories(q)) != from[i] {
			return false
		}
	}
	return true
}

// size is what ka keeps, as counted against keptBytes.
func (ka *keptAnchor) size() int64 {
	return int64(ka.json.hi-ka.json.lo) + 4*int64(ka.ends.hi-ka.ends.lo) +
		8*int64(ka.marks.hi-ka.marks.lo) + 12*int64(ka.from.hi-ka.from.lo) + 48
}

// keptShape holds one request shape's anchors, by provider index.
type keptShape struct {
	key     string
	anchors []atomic.Pointer[keptAnchor]
	used    atomic.Int64 // when last used, by the keeper's clock
	bytes   atomic.Int64 // what it keeps, by keptSize
}

// anchorKeeper holds the kept shapes of one provider table.
type anchorKeeper struct {
	mu     sync.Mutex
	shapes []*keptShape
	clock  int64
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
		k.shapes = slices.Delete(k.shapes, oldest, oldest+1)
	}
	sh := &keptShape{key: key, anchors: make([]atomic.Pointer[keptAnchor], providers)}
	sh.used.Store(k.clock)
	k.shapes = append(k.shapes, sh)
	return sh
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
	k := fmt.Appendf(make([]byte, 0, 256), "%s|%t|%d|%d|%t|%q|%d|", mv, opt.NestedAware, opt.MaxCandidates, opt.Order,
		opt.WideTrees, req.GroupPolicy, req.Limit)
	k = appendQuoted(k, req.RootRequired)
	k = appendQuoted(k, req.RootForbidden)
	for _, set := range req.SameSubtree {
		k = appendQuoted(k, set)
	}
	for i := range req.Groups {
		g := &req.Groups[i]
		k = strconv.AppendQuote(append(k, "|g"...), g.Suffix)
		for _, r := range g.Resources {
			k = strconv.AppendInt(strconv.AppendQuote(k, r.Class), r.Amount, 10)
		}
		for _, any := range g.Required {
			k = appendQuoted(k, any)
		}
		k = appendQuoted(append(k, "|f"...), g.Forbidden)
		for _, any := range g.MemberOf {
			k = appendQuoted(append(k, "|m"...), any)
		}
		k = appendQuoted(append(k, "|x"...), g.ForbiddenAggs)
		k = strconv.AppendQuote(k, g.InTree)
	}
	return string(k)
}

// appendQuoted appends a bracketed list of quoted strings.
func appendQuoted(k []byte, ss []string) []byte {
	k = append(k, '[')
	for _, s := range ss {
		k = strconv.AppendQuote(k, s)
	}
	return append(k, ']')
}

// streamKept streams q's answer into cj like Stream, replaying and
// keeping anchors with keeper when the query allows it; scratch recycles
// the anchorKeeps, with their tables, between answers.
func (q *Query) streamKept(cj *candidateJSON, keeper *anchorKeeper, scratch *sync.Pool, mv microversion.Version) []int32 {
	e := q.e
	if e == nil {
		return nil
	}
	k, _ := scratch.Get().(*anchorKeep)
	if k == nil {
		k = &anchorKeep{}
	}
	defer scratch.Put(k)
	// The roots bitset is 16 KB at 100k hosts: recycled, it saves the
	// collector a third of what a kept answer allocates.
	e.startStream(cj.add, k.rootBits)
	k.rootBits = e.rootBits
	if !e.anchorLocal() {
		e.run()
		return e.streamedSummaries()
	}
	clear(k.from) // pointers, for the collector
	*k = anchorKeep{cj: cj, swaps: cj.swaps, shape: keeper.shape(shapeKey(e.req, mv, &e.opt), len(e.s.Providers)),
		rootBits: k.rootBits, pending: k.pending[:0], ends: k.ends[:0], marks: k.marks[:0], provs: k.provs[:0],
		from: k.from[:0]}
	e.keep, e.sink = k, k.add
	e.run()
	k.keep()
	keeper.replayed.Add(int64(k.replayed))
	k.cj, k.shape = nil, nil
	return e.streamedSummaries()
}
