// Package backoff says how long to wait before trying again, and waits
// that long unless the context ends first. The agent and the reconciler
// share it, so that their retries spread out the same way.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Exponential is the wait before the nth retry (n counts from 1):
// base·2^(n-1), capped at max, with "equal jitter" (a uniform draw from
// the upper half), so that callers that failed together spread out. A
// non-positive base waits max.
func Exponential(base, max time.Duration, n int) time.Duration {
	d := max
	if base > 0 {
		d = base
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
		d = min(d, max)
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(half+1)
}

// Linear is the wait before the nth retry (n counts from 1): a uniform
// draw from [0, step·n], the bound capped at max ("full jitter", as
// Nova's report client waits a random 0..2·n s).
func Linear(step, max time.Duration, n int) time.Duration {
	d := min(step*time.Duration(n), max)
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
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

// Retry bounds a retried write: how many tries, and the exponential wait
// between them.
type Retry struct {
	// Attempts is the total number of tries, at least 1.
	Attempts int
	// BaseDelay is the wait before the second try; it doubles per try,
	// up to MaxDelay, with jitter so that racing writers spread out.
	BaseDelay time.Duration
	MaxDelay  time.Duration
}

// Wait sleeps before try number attempt+1 (attempt counts from 1), or
// returns ctx's error if it ends first.
func (r Retry) Wait(ctx context.Context, attempt int) error {
	return Sleep(ctx, Exponential(r.BaseDelay, r.MaxDelay, attempt))
}
