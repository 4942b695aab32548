package reconciler

import (
	"context"
	"math/rand/v2"
	"time"
)

// Retry bounds how a write is retried after a generation conflict.
type Retry struct {
	// Attempts is the total number of tries, at least 1.
	Attempts int
	// BaseDelay is the wait before the second try; it doubles per try,
	// up to MaxDelay, with jitter so that racing writers spread out.
	BaseDelay time.Duration
	MaxDelay  time.Duration
}

// DefaultRetry gives up after 5 tries, waiting at most about 1.5s in
// total; Nova retries its aggregate writes 4 times (LP#1779931).
var DefaultRetry = Retry{Attempts: 5, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second}

// wait sleeps before try number attempt+1 (attempt counts from 1), or
// returns ctx's error if it ends first.
func (r Retry) wait(ctx context.Context, attempt int) error {
	d := r.BaseDelay << (attempt - 1)
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	if d <= 0 {
		return ctx.Err()
	}
	// Equal jitter: half fixed, half random.
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
