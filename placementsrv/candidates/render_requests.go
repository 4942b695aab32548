package candidates

import (
	"slices"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
)

// candidateJSON renders an answer a candidate at a time into b; with a
// sink, b is handed to it whenever it reaches streamChunk bytes.
type candidateJSON struct {
	b    []byte
	sink chunkSink
	err  error
	q    *quotedNames
	req  *Request
	mv   microversion.Version
	// groupKeys are the mappings' `"suffix":[` openers, one per group.
	groupKeys      [][]byte
	dict, mappings bool
	n              int
	// swaps counts the chunks handed to the sink.
	swaps int
	// prevAllocs is the previous candidate's allocations and prevJSON
	// their rendering: symmetric trees give long runs of candidates that
	// differ only in their mappings.
	prevAllocs []Alloc
	prevJSON   []byte
	// prevMaps is the previous candidate's mappings, prevMapJSON their
	// rendering and prevMapEnd[g] where group g's part of it ends: in
	// depth-first order consecutive candidates share their first groups'
	// mappings, and only the rest is rendered again.
	prevMaps    [][]int32
	prevMapJSON []byte
	prevMapEnd  []int
	// single is the last request one provider served whole: its
	// allocations and their rendering after the provider's uuid.
	single struct {
		allocs []Alloc
		tail   []byte
	}
}

func newCandidateJSON(b []byte, sink chunkSink, q *quotedNames, req *Request, mv microversion.Version) *candidateJSON {
	cj := &candidateJSON{b: append(b, `{"allocation_requests":[`...), sink: sink, q: q, req: req, mv: mv,
		dict: mv.AtLeast(microversion.AllocationsDict), mappings: mv.AtLeast(microversion.Mappings)}
	if cj.mappings {
		cj.groupKeys = make([][]byte, len(req.Groups))
		for i, g := range req.Groups {
			cj.groupKeys[i] = append(jsonenc.AppendString(nil, g.Suffix), ":["...)
		}
	}
	return cj
}

// appendRendered adds n candidates rendered before (kept.go); false once
// writing failed.
func (cj *candidateJSON) appendRendered(p []byte, n int) bool {
	if cj.n > 0 {
		cj.b = append(cj.b, ',')
	}
	cj.b = append(cj.b, p...)
	cj.n += n
	return cj.flush()
}

// flush hands b to the sink once it is large enough; false once writing
// failed.
func (cj *candidateJSON) flush() bool {
	if cj.err != nil {
		return false
	}
	if cj.sink != nil && len(cj.b) >= streamChunk {
		cj.b, cj.err = cj.sink.swap(cj.b)
		cj.swaps++
	}
	return cj.err == nil
}

// add renders one allocation request; false stops generation (the
// client is gone).
func (cj *candidateJSON) add(c *Candidate) bool {
	b := cj.b
	if cj.n > 0 {
		b = append(b, ',')
	}
	cj.n++
	if cj.dict {
		if p, ok := singleProvider(c); ok {
			b = cj.appendSingle(b, c, p)
		} else {
			b = cj.appendMany(b, c)
		}
	} else {
		b = appendAllocations(b, cj.q, c, true)
	}
	cj.b = append(b, '}')
	return cj.flush()
}

// appendMany renders a request at 1.12 and later: its allocations (those
// of the previous one again when equal) and mappings.
func (cj *candidateJSON) appendMany(b []byte, c *Candidate) []byte {
	if cj.n > 1 && slices.Equal(c.Allocs, cj.prevAllocs) {
		b = append(b, cj.prevJSON...)
	} else {
		start := len(b)
		b = appendAllocations(b, cj.q, c, false)
		cj.prevAllocs = append(cj.prevAllocs[:0], c.Allocs...)
		cj.prevJSON = append(cj.prevJSON[:0], b[start:]...)
	}
	if cj.mappings {
		b = cj.appendMappings(b, c)
	}
	return b
}

// singleProvider returns the one provider that serves every allocation
// of c and every one of its groups, if there is one.
func singleProvider(c *Candidate) (int32, bool) {
	if len(c.Allocs) == 0 {
		return 0, false
	}
	p := c.Allocs[0].Provider
	for _, a := range c.Allocs[1:] {
		if a.Provider != p {
			return 0, false
		}
	}
	for _, m := range c.Mappings {
		if len(m) != 1 || m[0] != p {
			return 0, false
		}
	}
	return p, true
}

// appendSingle renders a request that one provider, p, serves whole: the
// common answer to a flavor on a flat compute node. Such requests differ
// in the provider only, as long as the amounts stay the same, so all
// after the provider's uuid is kept from the first and copied.
func (cj *candidateJSON) appendSingle(b []byte, c *Candidate, p int32) []byte {
	if !sameAmounts(c.Allocs, cj.single.allocs) {
		start := len(b)
		b = appendAllocations(b, cj.q, c, false)
		cj.single.allocs = append(cj.single.allocs[:0], c.Allocs...)
		cj.single.tail = append(cj.single.tail[:0], b[start+len(`{"allocations":{`)+len(cj.q.providers[p]):]...)
	} else {
		b = append(b, `{"allocations":{`...)
		b = append(b, cj.q.providers[p]...)
		b = append(b, cj.single.tail...)
	}
	if cj.mappings {
		b = append(b, `,"mappings":{`...)
		for g, key := range cj.groupKeys {
			if g > 0 {
				b = append(b, ',')
			}
			b = append(b, key...)
			b = append(b, cj.q.providers[p]...)
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return b
}

// sameAmounts reports whether a and b allocate the same amounts of the
// same classes in the same order, whatever the providers.
func sameAmounts(a, b []Alloc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Class != b[i].Class || a[i].Amount != b[i].Amount {
			return false
		}
	}
	return true
}

// appendAllocations writes a candidate's allocations, grouped by provider
// (Allocs are sorted by provider), without the request's closing brace:
// `{"allocations":{uuid:{"resources":{...}},...}` from 1.12, before that
// the list form `{"allocations":[{"resource_provider":{"uuid":uuid},"resources":{...}},...]`.
func appendAllocations(b []byte, q *quotedNames, c *Candidate, list bool) []byte {
	open, before, after, end := `{"allocations":{`, "", `:{"resources":{`, byte('}')
	if list {
		open, before, after, end = `{"allocations":[`, `{"resource_provider":{"uuid":`, `},"resources":{`, ']'
	}
	b = append(b, open...)
	for i, a := range c.Allocs {
		if i == 0 || c.Allocs[i-1].Provider != a.Provider {
			if i > 0 {
				b = append(b, "}},"...)
			}
			b = append(b, before...)
			b = append(b, q.providers[a.Provider]...)
			b = append(b, after...)
		} else {
			b = append(b, ',')
		}
		b = append(b, q.classes[a.Class]...)
		b = append(b, ':')
		b = jsonenc.AppendInt(b, a.Amount)
	}
	if len(c.Allocs) > 0 {
		b = append(b, "}}"...)
	}
	return append(b, end)
}

func (cj *candidateJSON) appendMappings(b []byte, c *Candidate) []byte {
	start := len(b)
	same := 0
	if cj.prevMaps == nil {
		cj.prevMaps = make([][]int32, len(c.Mappings))
		cj.prevMapEnd = make([]int, len(c.Mappings))
	} else {
		for same < len(c.Mappings) && slices.Equal(c.Mappings[same], cj.prevMaps[same]) {
			same++
		}
	}
	kept := len(`,"mappings":{`)
	if same > 0 {
		kept = cj.prevMapEnd[same-1]
		b = append(b, cj.prevMapJSON[:kept]...)
	} else {
		b = append(b, `,"mappings":{`...)
	}
	for gi := same; gi < len(c.Mappings); gi++ {
		provs := c.Mappings[gi]
		if gi > 0 {
			b = append(b, ',')
		}
		b = append(b, cj.groupKeys[gi]...)
		for k, p := range provs {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, cj.q.providers[p]...)
		}
		b = append(b, ']')
		cj.prevMapEnd[gi] = len(b) - start
		cj.prevMaps[gi] = append(cj.prevMaps[gi][:0], provs...)
	}
	if same == 0 {
		kept = 0
	}
	cj.prevMapJSON = append(cj.prevMapJSON[:kept], b[start+kept:]...)
	return append(b, '}')
}
