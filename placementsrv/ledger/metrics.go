package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Write outcomes, the "result" label of the transaction histogram.
const (
	resultCommitted = "committed" // committed and applied
	resultConflict  = "conflict"  // a generation moved: ErrConcurrentUpdate
	resultRejected  = "rejected"  // refused by validation (any other *store.Error)
	resultError     = "error"     // backend, commit or context failure
)

// ledgerMetrics instruments writes and read-model builds, under the
// "store" subsystem (the store as handlers see it). Every series is
// created up front, so a scrape shows zeros rather than nothing before the
// first write.
type ledgerMetrics struct {
	set           *metrics.Set
	txDuration    map[string]prometheus.Observer // by result
	conflicts     prometheus.Counter
	retries       prometheus.Counter
	snapshotBuild prometheus.Observer
}

func newLedgerMetrics() *ledgerMetrics {
	s := metrics.NewSet("store")
	txVec := s.HistogramVec("transaction_duration_seconds",
		"Time write transactions held the writer lock, from BEGIN to the in-memory apply after COMMIT, by result (committed, conflict, rejected, error).",
		metrics.LatencyBuckets(), "result")
	m := &ledgerMetrics{
		set:        s,
		txDuration: map[string]prometheus.Observer{},
		conflicts: s.Counter("generation_conflicts_total",
			"Writes refused because a resource provider or consumer generation had moved (HTTP 409 placement.concurrent_update)."),
		retries: s.Counter("transaction_retries_total",
			"Write transactions run again because the database aborted them for a conflict with other transactions (deadlock, lock wait timeout, cluster certification failure)."),
		// Unlabelled: the vector's one child is the histogram.
		snapshotBuild: s.HistogramVec("snapshot_build_duration_seconds",
			"Time to rebuild (or, after allocation-only writes, patch) the read model used by allocation candidates and the inventory metrics, once per burst of writes.",
			metrics.LatencyBuckets()).WithLabelValues(),
	}
	for _, r := range []string{resultCommitted, resultConflict, resultRejected, resultError} {
		m.txDuration[r] = txVec.WithLabelValues(r)
	}
	return m
}

// register adds the metrics to reg, or to a private registry when reg is
// nil.
func (m *ledgerMetrics) register(reg prometheus.Registerer) error {
	if err := m.set.Register(metrics.Private(reg)); err != nil {
		return fmt.Errorf("register store metrics: %w", err)
	}
	return nil
}

// observeWrite records one write transaction that took d and ended in err.
func (m *ledgerMetrics) observeWrite(d time.Duration, err error) {
	r := writeResult(err)
	m.txDuration[r].Observe(d.Seconds())
	if r == resultConflict {
		m.conflicts.Inc()
	}
}

func writeResult(err error) string {
	var se *store.Error
	switch {
	case err == nil:
		return resultCommitted
	case errors.Is(err, store.ErrConcurrentUpdate):
		return resultConflict
	case errors.As(err, &se):
		return resultRejected
	default:
		return resultError
	}
}
