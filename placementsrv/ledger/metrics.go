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
	txVec         *prometheus.HistogramVec
	txDuration    map[string]prometheus.Observer // txVec's children by result
	conflicts     prometheus.Counter
	retries       prometheus.Counter
	snapshotBuild prometheus.Histogram
}

func newLedgerMetrics() *ledgerMetrics {
	txVec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Subsystem: "store",
		Name:      "transaction_duration_seconds",
		Help:      "Time write transactions held the writer lock, from BEGIN to the in-memory apply after COMMIT, by result (committed, conflict, rejected, error).",
		Buckets:   metrics.LatencyBuckets(),
	}, []string{"result"})
	m := &ledgerMetrics{
		txVec:      txVec,
		txDuration: map[string]prometheus.Observer{},
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "store",
			Name:      "generation_conflicts_total",
			Help:      "Writes refused because a resource provider or consumer generation had moved (HTTP 409 placement.concurrent_update).",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "store",
			Name:      "transaction_retries_total",
			Help:      "Write transactions run again because the database aborted them for a conflict with other transactions (deadlock, lock wait timeout, cluster certification failure).",
		}),
		snapshotBuild: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metrics.Namespace,
			Subsystem: "store",
			Name:      "snapshot_build_duration_seconds",
			Help:      "Time to rebuild (or, after allocation-only writes, patch) the read model used by allocation candidates and the inventory metrics, once per burst of writes.",
			Buckets:   metrics.LatencyBuckets(),
		}),
	}
	for _, r := range []string{resultCommitted, resultConflict, resultRejected, resultError} {
		m.txDuration[r] = txVec.WithLabelValues(r)
	}
	return m
}

// register adds the metrics to reg, or to a private registry when reg is
// nil.
func (m *ledgerMetrics) register(reg prometheus.Registerer) error {
	reg = metrics.Private(reg)
	for _, c := range []prometheus.Collector{m.txVec, m.conflicts, m.retries, m.snapshotBuild} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register store metrics: %w", err)
		}
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
