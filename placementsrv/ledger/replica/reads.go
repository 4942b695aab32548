package replica

import (
	"context"
	"sync"
)

// feedReads shares reads of the change feed between a replica's callers.
// A caller needs a read that began after it arrived: every write
// acknowledged before it is in such a read. So callers that arrive while
// a read is under way wait together for the next one, which begins as
// soon as the current one ends and serves them all: under load a replica
// makes one round trip to the feed per round, not one per request.
type feedReads struct {
	mu sync.Mutex
	// next is the round that has not begun: a caller arriving now joins
	// it, and the first to join leads it.
	next *feedRound
	// turn is held by the round under way (capacity 1).
	turn chan struct{}
}

// feedRound is one read of the feed and its apply, and their outcome.
type feedRound struct {
	done chan struct{}
	err  error
	// callers counts those who joined (guarded by feedReads.mu).
	callers int
}

func newFeedReads() *feedReads { return &feedReads{turn: make(chan struct{}, 1)} }

// do runs read once for every caller that joined the round, after the
// read of the round before it ended, then the apply read returns (nil:
// nothing to apply), and returns the first error. The next round may read
// while this one applies: applies skip what another applied already. The
// leader runs read without its own cancellation, since others wait for
// the result; read and apply bound themselves. A caller that is not the
// leader returns when ctx ends.
func (f *feedReads) do(ctx context.Context, read func(context.Context) (apply func() error, err error)) error {
	f.mu.Lock()
	r := f.next
	lead := r == nil
	if lead {
		r = &feedRound{done: make(chan struct{})}
		f.next = r
	}
	r.callers++
	f.mu.Unlock()
	if !lead {
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.turn <- struct{}{}
	f.mu.Lock()
	f.next = nil // the read begins: later callers need the next one
	f.mu.Unlock()
	apply, err := read(context.WithoutCancel(ctx))
	<-f.turn
	if err == nil && apply != nil {
		err = apply()
	}
	r.err = err
	close(r.done)
	return r.err
}
