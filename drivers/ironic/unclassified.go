package ironic

import (
	"slices"
	"sync"

	"go.uber.org/zap"
)

// maxLoggedNodes bounds the node uuids one log line names.
const maxLoggedNodes = 20

// unclassified remembers which nodes had no resource class at the last
// pass, so that the warning is logged when that set changes rather than
// every pass.
type unclassified struct {
	mu   sync.Mutex
	last []string // sorted
}

// report logs the nodes without a resource class if they differ from the
// last pass's.
func (u *unclassified) report(log *zap.Logger, uuids []string) {
	now := slices.Clone(uuids)
	slices.Sort(now)
	u.mu.Lock()
	changed := !slices.Equal(now, u.last)
	u.last = now
	u.mu.Unlock()
	switch {
	case !changed:
	case len(now) == 0:
		log.Info("every node has a resource class again")
	default:
		named := now[:min(len(now), maxLoggedNodes)]
		log.Warn("nodes without a resource class are not reported; their providers are left as they are",
			zap.Int("nodes", len(now)), zap.Strings("uuids", named), zap.Bool("truncated", len(named) < len(now)))
	}
}
