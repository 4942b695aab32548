package placementsrv

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// candidateSettings are the server-wide allocation candidates options.
type candidateSettings struct {
	randomize bool
	max       int
	order     candidates.Order
	ownerNova ownerNovaPrefilter
	// quoted caches the JSON-quoted names of the latest snapshot.
	quoted atomic.Pointer[quotedNames]
	bufs   bufferPool
}

// quotedNames holds a snapshot's provider uuids and class names already
// encoded as JSON strings, so that rendering large answers is mostly
// copying.
type quotedNames struct {
	snap      *store.Snapshot
	providers [][]byte
	classes   [][]byte
	traits    [][]byte
	summaries summaryCache
}

// names returns the quoted names for snap, building them on first use.
func (c *candidateSettings) names(snap *store.Snapshot) *quotedNames {
	if q := c.quoted.Load(); q != nil && q.snap == snap {
		return q
	}
	q := &quotedNames{snap: snap, providers: make([][]byte, len(snap.Providers)), classes: make([][]byte, len(snap.Classes))}
	buf := make([]byte, 0, len(snap.Providers)*40)
	for i := range snap.Providers {
		start := len(buf)
		buf = appendJSONString(buf, snap.Providers[i].UUID)
		q.providers[i] = buf[start:len(buf):len(buf)]
	}
	for i, n := range snap.Classes {
		q.classes[i] = appendJSONString(nil, n)
	}
	q.traits = make([][]byte, len(snap.Traits))
	for i, n := range snap.Traits {
		q.traits[i] = appendJSONString(nil, n)
	}
	c.quoted.Store(q)
	return q
}

func (c *candidateSettings) configure(opts Options) error {
	if err := c.ownerNova.configure(opts); err != nil {
		return err
	}
	c.randomize = opts.RandomizeAllocationCandidates
	if opts.MaxAllocationCandidates < 0 {
		return fmt.Errorf("placementsrv: MaxAllocationCandidates %d is negative", opts.MaxAllocationCandidates)
	}
	c.max = opts.MaxAllocationCandidates
	switch opts.AllocationCandidatesOrder {
	case "", "depth-first":
		c.order = candidates.DepthFirst
	case "round-robin":
		c.order = candidates.RoundRobin
	default:
		return fmt.Errorf("placementsrv: unknown AllocationCandidatesOrder %q (want depth-first or round-robin)", opts.AllocationCandidatesOrder)
	}
	return nil
}

// listAllocationCandidates is GET /allocation_candidates.
func (s *Server) listAllocationCandidates(r *request) (*response, error) {
	if !r.at(microversion.AllocationCandidates) {
		return nil, notFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyCandidatesList); err != nil {
		return nil, err
	}
	q := queryValues(r)
	if err := s.schemas.AllocationCandidatesQuery(r.minor()).ValidateQuery(q); err != nil {
		return nil, badRequest("Invalid query string parameters: %s", err)
	}
	req, herr := candidatesRequest(r, q)
	if herr != nil {
		return nil, herr
	}
	s.cands.ownerNova.apply(r.creds.UserID.Get(), &req)
	snap, err := s.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	query, err := candidates.Prepare(snap, req, candidates.Options{
		NestedAware:   r.at(microversion.CandidatesNested),
		Randomize:     s.cands.randomize,
		MaxCandidates: s.cands.max,
		Order:         s.cands.order,
	})
	var nf *candidates.NotFoundError
	switch {
	case errors.As(err, &nf) && nf.Class:
		return nil, badRequest("Invalid resource class in resources parameter: %s", nf.Error())
	case errors.As(err, &nf):
		return nil, badRequest("%s", nf.Error())
	case err != nil:
		return nil, err
	}
	names := s.cands.names(snap)
	if query.Streamable() && r.Method != http.MethodHead {
		// Render each candidate as the search finds it: nothing
		// per-candidate is kept, and the client reads while the rest is
		// generated.
		resp := ok(nil).withLastModified(s.now())
		resp.stream = func(w *streamWriter) error {
			buf := s.cands.bufs.get()
			defer s.cands.bufs.put(buf)
			pipe := newChunkPipe(w, &s.cands.bufs)
			defer pipe.close()
			cj := newCandidateJSON(*buf, pipe, names, &req, r.mv)
			sums := query.Stream(cj.add)
			b, err := cj.finish(sums)
			*buf = b[:0]
			if cerr := pipe.close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return w.Last(b)
		}
		return resp, nil
	}
	res := query.Find()
	if len(res.Candidates) < streamCandidatesOver {
		body := appendCandidates(nil, nil, names, &req, &res, r.mv)
		return ok(rawJSON(body)).withLastModified(s.now()), nil
	}
	resp := ok(nil).withLastModified(s.now())
	resp.stream = func(w *streamWriter) error {
		buf := s.cands.bufs.get()
		defer s.cands.bufs.put(buf)
		pipe := newChunkPipe(w, &s.cands.bufs)
		defer pipe.close()
		b := appendCandidates(*buf, pipe, names, &req, &res, r.mv)
		*buf = b[:0]
		if err := pipe.close(); err != nil {
			return err
		}
		return w.Last(b)
	}
	return resp, nil
}

// Large answers (wide symmetric trees give tens of thousands of
// candidates, tens of megabytes) are streamed in chunks as they are
// rendered, so that the client reads while the server writes and no
// answer-sized buffer is built. Chunks are large because each costs
// socket writes: with 64 KiB chunks a 1.2 MB answer (1,300 candidates)
// took 18 writes and ../shared/bench measured p99 39 ms at 8 clients; at
// 4 MiB such answers go out in one write with a Content-Length, p99 23 ms.
const (
	streamCandidatesOver = 2000
	streamChunk          = 4 << 20
)

// bufferPool recycles the streaming render buffers between requests.
type bufferPool struct{ p sync.Pool }

func (p *bufferPool) get() *[]byte {
	if b, ok := p.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, streamChunk+8<<10)
	return &b
}

// put keeps buffers of the usual size only: one that grew to hold a whole
// answer is left to the collector.
func (p *bufferPool) put(b *[]byte) {
	if cap(*b) <= 2*streamChunk {
		*b = (*b)[:0]
		p.p.Put(b)
	}
}

// appendCandidates renders a materialized answer in the form of the
// microversion.
//
// With a sink, whatever is rendered is written to it every streamChunk
// bytes and the unwritten rest is returned; a write error stops rendering
// (the client is gone).
func appendCandidates(b []byte, sink chunkSink, q *quotedNames, req *candidates.Request, res *candidates.Result, mv microversion.Version) []byte {
	cj := newCandidateJSON(b, sink, q, req, mv)
	for i := range res.Candidates {
		if i == 1 && sink == nil {
			// Size the buffer once from the first candidate rather than
			// growing a many-megabyte answer by doubling.
			per := len(cj.b) + 16
			cj.b = slices.Grow(cj.b, per*len(res.Candidates)+len(res.Summaries)*400)
		}
		if !cj.add(&res.Candidates[i]) {
			return cj.b[:0]
		}
	}
	b, err := cj.finish(res.Summaries)
	if err != nil {
		return b[:0]
	}
	return b
}

// candidateJSON renders an answer a candidate at a time into b; with a
// sink, b is handed to it whenever it reaches streamChunk bytes.
type candidateJSON struct {
	b    []byte
	sink chunkSink
	err  error
	q    *quotedNames
	req  *candidates.Request
	mv   microversion.Version
	// groupKeys are the mappings' `"suffix":[` openers, one per group.
	groupKeys      [][]byte
	dict, mappings bool
	n              int
	// prevAllocs is the previous candidate's allocations and prevJSON
	// their rendering: symmetric trees give long runs of candidates that
	// differ only in their mappings.
	prevAllocs []candidates.Alloc
	prevJSON   []byte
	// prevMaps is the previous candidate's mappings, prevMapJSON their
	// rendering and prevMapEnd[g] where group g's part of it ends: in
	// depth-first order consecutive candidates share their first groups'
	// mappings, and only the rest is rendered again.
	prevMaps    [][]int32
	prevMapJSON []byte
	prevMapEnd  []int
}

func newCandidateJSON(b []byte, sink chunkSink, q *quotedNames, req *candidates.Request, mv microversion.Version) *candidateJSON {
	cj := &candidateJSON{b: append(b, `{"allocation_requests":[`...), sink: sink, q: q, req: req, mv: mv,
		dict: mv.AtLeast(microversion.AllocationsDict), mappings: mv.AtLeast(microversion.Mappings)}
	if cj.mappings {
		cj.groupKeys = make([][]byte, len(req.Groups))
		for i, g := range req.Groups {
			cj.groupKeys[i] = append(appendJSONString(nil, g.Suffix), ":["...)
		}
	}
	return cj
}

// flush hands b to the sink once it is large enough; false once writing
// failed.
func (cj *candidateJSON) flush() bool {
	if cj.err != nil {
		return false
	}
	if cj.sink != nil && len(cj.b) >= streamChunk {
		cj.b, cj.err = cj.sink.swap(cj.b)
	}
	return cj.err == nil
}

// add renders one allocation request; false stops generation (the
// client is gone).
func (cj *candidateJSON) add(c *candidates.Candidate) bool {
	b := cj.b
	if cj.n > 0 {
		b = append(b, ',')
	}
	cj.n++
	if cj.dict {
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
	} else {
		b = appendAllocations(b, cj.q, c, true)
	}
	cj.b = append(b, '}')
	return cj.flush()
}

// finish renders the summaries and the closing braces, returning what
// is left to write.
func (cj *candidateJSON) finish(sums []int32) ([]byte, error) {
	cj.b = append(cj.b, `],"provider_summaries":{`...)
	cj.appendSummaries(sums)
	return append(cj.b, "}}"...), cj.err
}

// appendAllocations writes a candidate's allocations, grouped by provider
// (Allocs are sorted by provider), without the request's closing brace:
// `{"allocations":{uuid:{"resources":{...}},...}` from 1.12, before that
// the list form `{"allocations":[{"resource_provider":{"uuid":uuid},"resources":{...}},...]`.
func appendAllocations(b []byte, q *quotedNames, c *candidates.Candidate, list bool) []byte {
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
		b = appendInt(b, a.Amount)
	}
	if len(c.Allocs) > 0 {
		b = append(b, "}}"...)
	}
	return append(b, end)
}

func (cj *candidateJSON) appendMappings(b []byte, c *candidates.Candidate) []byte {
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
