package candidates

import "github.com/placement-syncd/placement-syncd/placementsrv/readmodel"

// anchorKeep is one streamed answer's use of a shape: it replays kept
// anchors into cj, and notes the anchors it searches, which keep ends
// up keeping together as one block.
type anchorKeep struct {
	shape *keptShape
	cj    *candidateJSON
	// replayed counts the anchors copied from shape.
	replayed int
	// the anchor being searched: where its first candidate will start
	// (after the comma that separates it from the answer's previous one)
	// and the answer's count before it
	start, n0 int
	// the anchors searched, to keep at the end; their tables grow in
	// ends, marks, from. An answer that outgrows one chunk (its first
	// bytes went to the client, swaps changed) keeps nothing: keeping is
	// for the answers a scheduler asks for, a limit's worth.
	pending []pendingAnchor
	swaps   int
	off     bool
	ends    []int32
	marks   []rootMark
	provs   []int32
	from    []*readmodel.SnapInventory
	// rootBits is the answer's bitset of roots, kept for the next one.
	rootBits []uint64
}

// pendingAnchor is a searched anchor: its bytes in the render buffer and
// its ranges of the tables.
type pendingAnchor struct {
	root                    int32
	json, ends, marks, from span
	partial                 bool
}

// replay copies r's kept candidates into the answer, up to the limit,
// reporting whether it had them.
func (k *anchorKeep) replay(e *engine, r int32) bool {
	ka := k.shape.anchors[r].Load()
	if ka == nil || !ka.current(e.s) {
		return false
	}
	ends := ka.b.ends[ka.ends.lo:ka.ends.hi]
	if len(ends) == 0 {
		k.replayed++
		return true // an anchor without candidates
	}
	n := len(ends)
	if e.target > 0 {
		n = min(n, e.target-e.emitted)
	}
	if ka.partial && (e.target == 0 || e.target-e.emitted > len(ends)) {
		return false // the answer needs more of r than was kept
	}
	for _, m := range ka.b.marks[ka.marks.lo:ka.marks.hi] {
		if int(m.cand) < n {
			setBit(e.rootBits, m.root)
		}
	}
	e.emitted += n
	k.replayed++
	json := ka.b.json[ka.json.lo : int(ka.json.lo)+int(ends[n-1])]
	if !k.cj.appendRendered(json, n) || e.target > 0 && e.emitted >= e.target {
		e.stopped = true
	}
	return true
}

// begin starts noting the anchor about to be searched.
func (k *anchorKeep) begin(e *engine) {
	if k.off = k.off || k.cj.swaps != k.swaps; k.off {
		return
	}
	k.start, k.n0 = len(k.cj.b), e.emitted
	if k.cj.n > 0 {
		k.start++
	}
	k.pending = append(k.pending, pendingAnchor{ends: spanOf(len(k.ends), len(k.ends)),
		marks: spanOf(len(k.marks), len(k.marks))})
}

// add renders a candidate of the anchor being searched.
func (k *anchorKeep) add(c *Candidate) bool {
	ok := k.cj.add(c)
	if k.off {
		return ok
	}
	k.ends = append(k.ends, int32(len(k.cj.b)-k.start))
	return ok
}

// mark notes that candidate cand (of the answer) takes from root's tree.
func (k *anchorKeep) mark(root int32, cand int) {
	if k.off {
		return
	}
	p := &k.pending[len(k.pending)-1]
	for _, m := range k.marks[p.marks.lo:] {
		if m.root == root {
			return
		}
	}
	k.marks = append(k.marks, rootMark{root: root, cand: int32(cand - k.n0)})
}

// end finishes noting the anchor just searched; one that failed to be
// written or whose bytes went to the client is dropped, one a limit cut
// short is kept as partial, and one without candidates is kept too (the
// sharing providers' own roots, most roots of a narrow request), so that
// it is not searched again.
func (k *anchorKeep) end(e *engine, r int32) {
	if k.off {
		return
	}
	p := &k.pending[len(k.pending)-1]
	p.ends.hi, p.marks.hi = int32(len(k.ends)), int32(len(k.marks))
	if k.cj.swaps != k.swaps || k.cj.err != nil {
		k.pending = k.pending[:len(k.pending)-1]
		k.ends, k.marks = k.ends[:p.ends.lo], k.marks[:p.marks.lo]
		return
	}
	// An anchor without candidates wrote no comma either: its span is
	// empty.
	p.root, p.json, p.partial = r, spanOf(min(k.start, len(k.cj.b)), len(k.cj.b)), e.stopped
	pr := &e.s.Providers[r]
	lo := len(k.from)
	k.provs = append(append(k.provs, pr.Tree...), pr.SharedTo...)
	for _, q := range k.provs[lo:] {
		k.from = append(k.from, firstInventory(e.s.Inventories(q)))
	}
	p.from = spanOf(lo, len(k.from))
}

// keep keeps the anchors noted, as one block, while the shape has room.
func (k *anchorKeep) keep() {
	if len(k.pending) == 0 || k.off || k.cj.swaps != k.swaps {
		return
	}
	n := 0
	for _, p := range k.pending {
		n += int(p.json.hi - p.json.lo)
	}
	b := &keptBlock{json: make([]byte, 0, n), ends: append([]int32(nil), k.ends...),
		marks: append([]rootMark(nil), k.marks...), provs: append([]int32(nil), k.provs...),
		from: append([]*readmodel.SnapInventory(nil), k.from...)}
	kas := make([]keptAnchor, len(k.pending))
	for i, p := range k.pending {
		at := len(b.json)
		b.json = append(b.json, k.cj.b[p.json.lo:p.json.hi]...)
		kas[i] = keptAnchor{b: b, json: spanOf(at, len(b.json)), ends: p.ends, marks: p.marks, from: p.from, partial: p.partial}
	}
	// The block is complete before its first anchor is published: other
	// answers read it from then on.
	room, added := keptBytes-k.shape.bytes.Load(), int64(0)
	for i, p := range k.pending {
		ka := &kas[i]
		if added+ka.size() > room {
			break
		}
		added += ka.size()
		if old := k.shape.anchors[p.root].Swap(ka); old != nil {
			added -= old.size()
		}
	}
	k.shape.bytes.Add(added)
}
