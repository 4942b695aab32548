package reconciler

import (
	"time"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
)

// DefaultRetry is how a write is retried after a generation conflict (or
// an unavailable Placement): it gives up after 5 tries, waiting at most
// about 1.5s in total, doubling from 50ms with jitter; Nova retries its
// aggregate writes 4 times (LP#1779931).
func DefaultRetry() backoff.Policy {
	return backoff.Policy{Attempts: 5, Base: 50 * time.Millisecond, Cap: time.Second}
}
