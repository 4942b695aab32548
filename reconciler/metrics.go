package reconciler

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the reconciler's collectors. Labels are bounded: job is one
// of the configured job names, result one of ok, error, skipped.
type metrics struct {
	runs         *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	changes      *prometheus.CounterVec
	drift        *prometheus.GaugeVec
	unmapped     *prometheus.GaugeVec
	conflicts    *prometheus.CounterVec
	giveUps      *prometheus.CounterVec
	lastRun      *prometheus.GaugeVec
	lastSuccess  *prometheus.GaugeVec
	gateOpen     prometheus.Gauge
	gateMin      prometheus.Gauge
	gateRequired prometheus.Gauge
	gateComputes prometheus.Gauge
	heartbeats   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "placement_syncd", "reconciler"
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_total",
			Help: "Reconciler job runs by job and result (ok, error, skipped)."}, []string{"job", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "run_duration_seconds",
			Help: "Duration of reconciler job runs.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"job"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "changes_total",
			Help: "Associations or traits written to Placement by reconciler jobs."}, []string{"job"}),
		drift: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "drift",
			Help: "Differences found between Nova and Placement by the last run of each job."}, []string{"job"}),
		unmapped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "hosts_without_provider",
			Help: "Nova hosts with no compute node provider in Placement at the last run of each job."}, []string{"job"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "generation_conflicts_total",
			Help: "Placement generation conflicts (409) met by reconciler writes; each is re-read and retried."}, []string{"job"}),
		giveUps: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "give_ups_total",
			Help: "Provider writes abandoned after the bounded number of conflict retries."}, []string{"job"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "last_run_timestamp_seconds",
			Help: "Start time of the last run of each job."}, []string{"job"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "last_success_timestamp_seconds",
			Help: "End time of the last successful run of each job (alert when it grows old)."}, []string{"job"}),
		gateOpen: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "owner_nova_gate_open",
			Help: "1 when the OWNER_NOVA version gate is open, 0 when closed."}),
		gateMin: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "compute_min_version",
			Help: "Lowest version over counted nova-compute services (0 with none)."}),
		gateRequired: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "compute_required_version",
			Help: "nova-compute version the OWNER_NOVA gate requires."}),
		gateComputes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "compute_services",
			Help: "nova-compute services counted by the version gate."}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "heartbeats_total",
			Help: "Service heartbeats received."}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.changes, m.drift, m.unmapped, m.conflicts, m.giveUps,
		m.lastRun, m.lastSuccess, m.gateOpen, m.gateMin, m.gateRequired, m.gateComputes, m.heartbeats} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observeGate(g GateState) {
	v := 0.0
	if g.Open {
		v = 1
	}
	m.gateOpen.Set(v)
	m.gateMin.Set(float64(g.MinVersion))
	m.gateRequired.Set(float64(g.Required))
	m.gateComputes.Set(float64(g.Computes))
}
