package candidates

import (
	"io"
	"sync"
	"sync/atomic"
)

// streamChunk is the size of the chunks a streamed answer is written in.
// Chunks are large because each costs socket writes: with 64 KiB chunks a
// 1.2 MB answer (1,300 candidates) took 18 writes and ../shared/bench
// measured p99 39 ms at 8 clients; at 4 MiB such answers go out in one
// write with a Content-Length, p99 23 ms.
const streamChunk = 4 << 20

// chunkSink takes a full render buffer and returns an empty one to go
// on rendering into.
type chunkSink interface {
	swap(b []byte) ([]byte, error)
}

// writerSink writes each chunk before rendering goes on.
type writerSink struct{ w io.Writer }

func (s writerSink) swap(b []byte) ([]byte, error) {
	_, err := s.w.Write(b)
	return b[:0], err
}

// chunkPipe writes chunks from a goroutine of its own, so that rendering
// the next chunk overlaps sending this one: for the wide tree's 47 MB
// answer the two take about as long each. It holds two buffers: one being
// rendered, one being written. The goroutine starts with the first chunk,
// so answers of a single chunk never pay for it.
type chunkPipe struct {
	w       io.Writer
	bufs    *bufferPool
	out     chan []byte // to the writer
	free    chan []byte // written, back to the renderer
	done    chan struct{}
	err     error // the first write error, set by the writer
	failed  atomic.Bool
	started bool
	closed  bool
}

func newChunkPipe(w io.Writer, bufs *bufferPool) *chunkPipe {
	return &chunkPipe{w: w, bufs: bufs}
}

func (p *chunkPipe) swap(b []byte) ([]byte, error) {
	if p.failed.Load() {
		return b[:0], p.err
	}
	if !p.started {
		p.started = true
		p.out, p.free, p.done = make(chan []byte), make(chan []byte, 2), make(chan struct{})
		p.free <- *p.bufs.get()
		go p.write()
	}
	p.out <- b
	next := <-p.free
	return next[:0], nil
}

// write runs on its own goroutine until close; after a failed write it
// only hands buffers back.
func (p *chunkPipe) write() {
	defer close(p.done)
	for b := range p.out {
		if !p.failed.Load() {
			if _, err := p.w.Write(b); err != nil {
				p.err = err
				p.failed.Store(true)
			}
		}
		p.free <- b
	}
}

// close waits until every chunk handed over is written, returns the
// spare buffer to the pool and reports the first write error. Calling it
// again does nothing, so a deferred call can guard against a panic
// leaving the writer goroutine behind.
func (p *chunkPipe) close() error {
	if !p.started || p.closed {
		return p.err
	}
	p.closed = true
	close(p.out)
	<-p.done
	for len(p.free) > 0 {
		b := <-p.free
		p.bufs.put(&b)
	}
	return p.err
}

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
