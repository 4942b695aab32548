package candidates

import (
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Renderer writes answers in Placement's JSON, at the request's
// microversion. Between requests it keeps the latest snapshot's names
// already quoted (and their provider summaries, see summaryCache) and the
// buffers of streamed answers. It is safe for concurrent use.
type Renderer struct {
	quoted atomic.Pointer[quotedNames]
	bufs   bufferPool
	keeps  sync.Pool // *anchorKeep
}

// Writer receives a streamed answer: pieces with Write, then the final
// piece with Last, which can still send the whole answer with a
// Content-Length when it is the only piece.
type Writer interface {
	io.Writer
	Last(p []byte) error
}

// Answer is a query's rendered answer: Body, or, for an answer too large
// to build first, Stream, which renders and writes it.
type Answer struct {
	Body   []byte
	Stream func(w Writer) error
}

// Large answers (wide symmetric trees give tens of thousands of
// candidates, tens of megabytes) are streamed in chunks as they are
// rendered, so that the client reads while the server writes and no
// answer-sized buffer is built.
const streamCandidatesOver = 2000

// Answer runs q, prepared from req on snap, and renders its answer. A
// Streamable query is rendered candidate by candidate as the search finds
// them, nothing per candidate being kept, and the client reads while the
// rest is generated; others are materialized first. head reports a HEAD
// request, whose answer is computed whole so that it carries its length.
func (rd *Renderer) Answer(snap *readmodel.Snapshot, q *Query, req *Request, mv microversion.Version, head bool) Answer {
	names := rd.names(snap)
	if q.Streamable() && !head {
		return Answer{Stream: func(w Writer) error {
			return rd.write(w, func(buf []byte, sink chunkSink) ([]byte, error) {
				cj := newCandidateJSON(buf, sink, names, req, mv)
				return cj.finish(q.streamKept(cj, names.kept, &rd.keeps, mv))
			})
		}}
	}
	res := q.Find()
	if len(res.Candidates) < streamCandidatesOver {
		return Answer{Body: rd.Render(snap, req, &res, mv)}
	}
	return Answer{Stream: func(w Writer) error {
		return rd.write(w, func(buf []byte, sink chunkSink) ([]byte, error) {
			return appendCandidates(buf, sink, names, req, &res, mv), nil
		})
	}}
}

// Render renders a materialized answer whole.
func (rd *Renderer) Render(snap *readmodel.Snapshot, req *Request, res *Result, mv microversion.Version) []byte {
	return appendCandidates(nil, nil, rd.names(snap), req, res, mv)
}

// write runs render into a pooled buffer, handing full chunks to w
// through a chunk pipe, and sends what is left as w's last piece.
func (rd *Renderer) write(w Writer, render func(buf []byte, sink chunkSink) ([]byte, error)) error {
	buf := rd.bufs.get()
	defer rd.bufs.put(buf)
	pipe := newChunkPipe(w, &rd.bufs)
	defer pipe.close()
	b, err := render(*buf, pipe)
	*buf = b[:0]
	if cerr := pipe.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return w.Last(b)
}

// appendCandidates renders a materialized answer in the form of the
// microversion.
//
// With a sink, whatever is rendered is written to it every streamChunk
// bytes and the unwritten rest is returned; a write error stops rendering
// (the client is gone).
func appendCandidates(b []byte, sink chunkSink, q *quotedNames, req *Request, res *Result, mv microversion.Version) []byte {
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

// finish renders the summaries and the closing braces, returning what
// is left to write.
func (cj *candidateJSON) finish(sums []int32) ([]byte, error) {
	cj.b = append(cj.b, `],"provider_summaries":{`...)
	cj.appendSummaries(sums)
	return append(cj.b, "}}"...), cj.err
}
