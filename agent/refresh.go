package agent

import (
	"hash/fnv"
	"time"
)

// Why a provider is re-read in a pass rather than taken from the cache
// (the reason label of providers_reread_total).
const (
	rereadUncached   = "uncached"   // not read since the process started
	rereadRestored   = "restored"   // restored from the state file, not listed
	rereadGeneration = "generation" // its listed generation moved
	rereadAggregates = "aggregates" // aggregates became managed
	rereadRefresh    = "refresh"    // its periodic full re-read is due
	rereadConflict   = "conflict"   // a write lost a race
)

// staleReason says why the cached state c (ok: there is one) of p, listed
// at generation gen, must be re-read at now; "" means the cache holds.
// Every inventory, trait and (from 1.19) aggregate write bumps the
// generation, so a matching generation is what Placement holds; the
// periodic re-read covers what a generation cannot show, such as a
// provider deleted and re-created up to the same generation, and, for a
// provider not listed (gen < 0), what others changed.
func (a *Agent) staleReason(c actual, ok, managedAggs bool, uuid string, gen int, now time.Time) string {
	switch {
	case !ok:
		return rereadUncached
	case gen < 0 && c.restored:
		return rereadRestored
	case gen >= 0 && c.gen != gen:
		return rereadGeneration
	case managedAggs && c.aggs == nil:
		return rereadAggregates
	case refreshDue(uuid, c.readAt, now, a.opts.RefreshInterval):
		return rereadRefresh
	}
	return ""
}

// refreshDue reports whether a provider read at readAt is due for its
// periodic re-read at now. Each provider has its own phase within the
// period (a hash of its uuid), so that a fleet read at once at start is
// re-read a slice per pass rather than all in one pass a period later.
// A period <= 0 turns the re-read off.
func refreshDue(uuid string, readAt, now time.Time, period time.Duration) bool {
	if period <= 0 {
		return false
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(uuid))
	phase := int64(h.Sum64() % uint64(period))
	n := now.UnixNano()
	// The latest instant <= now that is phase past a multiple of period.
	slot := n - ((n-phase)%int64(period)+int64(period))%int64(period)
	return readAt.UnixNano() < slot
}
