package reconciler

import (
	"time"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
)

// Retry bounds how a write is retried after a generation conflict (or an
// unavailable Placement): tries and the exponential wait between them.
type Retry = backoff.Retry

// DefaultRetry gives up after 5 tries, waiting at most about 1.5s in
// total; Nova retries its aggregate writes 4 times (LP#1779931).
var DefaultRetry = Retry{Attempts: 5, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second}
