// Package backoff says how long to wait before trying again, and waits
// that long unless the context ends first. The agent, the reconciler,
// the drivers, the ledger, its replicas and the MySQL backend state their
// retries as one type, Policy.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is how a caller retries: how many tries, and the wait before
// each retry. The zero Growth and Jitter double the wait from Base and
// draw it from its upper half. A retry loop counts tries from 1 and
// stops after try Attempts; the zero Cap retries at once.
type Policy struct {
	// Base is the bound on the wait before the first retry.
	Base time.Duration
	// Cap bounds every wait; a non-positive Cap means no wait at all.
	// Doubling from a non-positive Base waits Cap.
	Cap    time.Duration
	Growth Growth
	Jitter Jitter
	// Attempts is the total number of tries, at least 1, for callers
	// that count them.
	Attempts int
}

// Growth is how the bound on the wait grows with the retry number n
// (counted from 1).
type Growth int

const (
	// Doubling bounds retry n by Base·2^(n-1) (retry 0 as retry 1).
	Doubling Growth = iota
	// Linear bounds retry n by Base·n (retry 0 does not wait).
	Linear
)

// Jitter is how the wait is drawn, so that callers that failed together
// spread out.
type Jitter int

const (
	// EqualJitter draws from the upper half of the bound, [d/2, d].
	EqualJitter Jitter = iota
	// FullJitter draws from [0, d], as Nova's report client waits a
	// random 0..2·n s.
	FullJitter
	// NoJitter waits d exactly, for a caller that retries alone (a
	// migration that met another node's).
	NoJitter
)

// Delay is the wait before retry n (n counts from 1), drawn from the
// process's random source.
func (p Policy) Delay(n int) time.Duration {
	return p.delay(n, rand.Int64N)
}

// delay is Delay with the random draw given: draw(m) is uniform in
// [0, m).
func (p Policy) delay(n int, draw func(int64) int64) time.Duration {
	d := p.bound(n)
	if d <= 0 {
		return 0
	}
	switch p.Jitter {
	case FullJitter:
		return time.Duration(draw(int64(d) + 1))
	case NoJitter:
		return d
	}
	half := d / 2
	return half + time.Duration(draw(int64(half)+1))
}

// bound is the largest wait before retry n, at most Cap.
func (p Policy) bound(n int) time.Duration {
	if p.Growth == Linear {
		return min(p.Base*time.Duration(n), p.Cap)
	}
	if p.Base <= 0 {
		return p.Cap
	}
	d := p.Base
	for i := 1; i < n && d < p.Cap; i++ {
		d *= 2
	}
	return min(d, p.Cap)
}

// Wait sleeps before retry n (n counts from 1), or returns ctx's error
// if it ends first.
func (p Policy) Wait(ctx context.Context, n int) error {
	return Sleep(ctx, p.Delay(n))
}

// Sleep waits d, or returns ctx's error if ctx ends first. A
// non-positive d does not wait and returns ctx's error, if any.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
