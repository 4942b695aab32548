package candidates

import "math/bits"

// Stream calls fn with each candidate of a Streamable query in answer
// order, without keeping them; the candidate and its slices are only
// valid during the call. fn returning false stops generation. Stream
// returns the provider summaries of what it produced, as Result.Summaries.
func (q *Query) Stream(fn func(*Candidate) bool) []int32 {
	e := q.e
	if e == nil {
		return nil
	}
	e.startStream(fn, nil)
	e.run()
	return e.streamedSummaries()
}

// startStream makes e hand its candidates to fn, marking roots in
// rootBits, cleared, when it is large enough.
func (e *engine) startStream(fn func(*Candidate) bool, rootBits []uint64) {
	n := (len(e.s.Providers) + 63) / 64
	if cap(rootBits) < n {
		rootBits = make([]uint64, n)
	}
	rootBits = rootBits[:n]
	clear(rootBits)
	e.sink, e.rootBits = fn, rootBits
	if e.excludeNested {
		e.usedBits = make([]uint64, n)
	}
	e.cur.Mappings = make([][]int32, len(e.groups))
}

// markRoot notes that the candidate just produced takes from root r's
// tree.
func (e *engine) markRoot(r int32) {
	setBit(e.rootBits, r)
	if e.keep != nil {
		e.keep.mark(r, e.emitted-1)
	}
}

// streamedSummaries lists the providers to summarize after a stream: the
// trees of the roots marked (before 1.29 only the providers used).
func (e *engine) streamedSummaries() []int32 {
	// Sized from the roots alone: reading every root's tree twice costs
	// more at 100k hosts than growing the list for the nested ones.
	n := 0
	for _, word := range e.rootBits {
		n += bits.OnesCount64(word)
	}
	sums := make([]int32, 0, n+n/2)
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

// Anchor calls fn with the candidates anchor r gives, in answer order,
// as a request asked now would list them at r; fn returning false stops.
// Unlike Stream it may be called again, for r or another anchor, after
// the snapshot's usage changed (a readmodel.Draft's): each call is a new
// request at one anchor, so the candidates made only of sharing
// providers that another anchor gave are not left out, and which anchor
// keeps a sharing-only option of the unsuffixed group is decided again
// (unless SameFits says nothing it depends on changed).
// Placement's in-place folding of amounts (Folds) is not replayed: the
// candidates take the amounts asked.
func (q *Query) Anchor(r int32, fn func(*Candidate) bool) {
	e := q.e
	if e == nil {
		return
	}
	if e.rootBits == nil {
		e.startStream(fn, nil)
	}
	e.sink = fn
	e.stopped, e.emitted, e.dedup = false, 0, nil
	if !e.sameFits {
		e.owners = nil
	}
	e.sameFits = false
	infl := e.infl
	e.infl = nil
	e.runAnchor(r, e.flatGroup())
	e.infl = infl
}

// SameFits tells the query that since its last Anchor call usage changed
// only where no provider started or stopped fitting an amount the
// unsuffixed group asks for (readmodel.SnapInventory.Fits): which anchor
// keeps a sharing-only option depends on nothing else, so the next
// Anchor call keeps what the last one worked out instead of replaying
// Placement's sets over every provider of those classes.
func (q *Query) SameFits() {
	if q.e != nil {
		q.e.sameFits = true
	}
}

// Folds reports whether Placement would fold the request's amounts in
// place (a class asked by the unsuffixed group and a granular one, with
// group_policy other than none; see inflation), which Anchor does not
// replay.
func (q *Query) Folds() bool { return q.e != nil && q.e.infl != nil }
