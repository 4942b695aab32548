package reconciler

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
)

// reconcilerMetrics are the reconciler's collectors. Labels are bounded: job is one
// of the configured job names, result one of ok, error, skipped.
type reconcilerMetrics struct {
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
	refused      *prometheus.CounterVec
	// cellUnreadable is 1 per cell whose database the last read of the
	// compute list could not read; listErrors counts failed reads.
	cellUnreadable *prometheus.GaugeVec
	listErrors     prometheus.Counter
	unknown        prometheus.Gauge
	// auditFindings are the last audit run's findings by kind;
	// auditRuns its runs by result (ok, error, partial).
	auditFindings *prometheus.GaugeVec
	auditRuns     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*reconcilerMetrics, error) {
	// A run takes from 10 ms to about a minute (thousands of hosts):
	// buckets up to about 82 s.
	runBuckets := prometheus.ExponentialBuckets(0.01, 2, 14)
	s := metrics.NewSet("reconciler")
	m := &reconcilerMetrics{
		runs:     s.CounterVec("runs_total", "Reconciler job runs by job and result (ok, error, skipped).", "job", "result"),
		duration: s.HistogramVec("run_duration_seconds", "Duration of reconciler job runs.", runBuckets, "job"),
		changes:  s.CounterVec("changes_total", "Associations or traits written to Placement by reconciler jobs.", "job"),
		drift:    s.GaugeVec("drift", "Differences found between Nova and Placement by the last run of each job.", "job"),
		unmapped: s.GaugeVec("hosts_without_provider",
			"Nova hosts with no compute node provider in Placement at the last run of each job.", "job"),
		conflicts: s.CounterVec("generation_conflicts_total",
			"Placement generation conflicts (409) met by reconciler writes; each is re-read and retried.", "job"),
		giveUps: s.CounterVec("give_ups_total", "Provider writes abandoned after the bounded number of conflict retries.", "job"),
		lastRun: s.GaugeVec("last_run_timestamp_seconds", "Start time of the last run of each job.", "job"),
		lastSuccess: s.GaugeVec("last_success_timestamp_seconds",
			"End time of the last successful run of each job (alert when it grows old).", "job"),
		gateOpen:     s.Gauge("owner_nova_gate_open", "1 when the OWNER_NOVA version gate is open, 0 when closed."),
		gateMin:      s.Gauge("compute_min_version", "Lowest version over counted nova-compute services (0 with none)."),
		gateRequired: s.Gauge("compute_required_version", "nova-compute version the OWNER_NOVA gate requires."),
		gateComputes: s.Gauge("compute_services", "nova-compute services counted by the version gate."),
		heartbeats:   s.Counter("heartbeats_total", "Service heartbeats received."),
		refused: s.CounterVec("refused_runs_total",
			"Aggregate mirroring runs refused before writing (reason: empty_answer, max_removals); --force overrides.", "reason"),
		cellUnreadable: s.GaugeVec("nova_cell_unreadable",
			"1 for each Nova cell database the last read of the compute list could not read (the gate is closed), 0 once read again.", "cell"),
		listErrors: s.Counter("compute_list_errors_total",
			"Failed reads of Nova's compute list (a cell database, the API database or os-services); each closes the gate."),
		unknown: s.Gauge("compute_unknown_version",
			"Listed nova-compute services with no known version (their cell not answering Nova, or in no configured cell); each keeps the gate closed."),
	}
	// The audit's families are named for alert rules written against
	// them: placement_syncd_audit_*, a set of their own.
	a := metrics.NewSet("audit")
	m.auditFindings = a.GaugeVec("findings", "Findings of the last audit run by kind (orphaned_consumer, stale_provider, over_capacity, incomplete_consumer); "+
		"orphans and stale providers count only when Nova was read in full.", "kind")
	m.auditRuns = a.CounterVec("runs_total", "Audit runs by result (ok; partial: Nova read in part, nothing deleted; error: Placement or Nova not read at all, or deletes failed).", "result")
	if err := s.Register(reg); err != nil {
		return m, err
	}
	return m, a.Register(reg)
}

// auditScheduled shows the audit's run counters at zero once the job is
// scheduled: a counter that first appears at 1 loses that run to rate()
// and increase(), and an alert on failed runs would miss the first.
func (m *reconcilerMetrics) auditScheduled() {
	for _, result := range []string{AuditResultOK, AuditResultError, AuditResultPartial} {
		m.auditRuns.WithLabelValues(result)
	}
}

// observeAudit counts an audit run and sets the findings of one that
// read Placement. Orphans and stale providers are left as they were when
// Nova was read in part or not at all: the run could not confirm them.
func (m *reconcilerMetrics) observeAudit(res *audit.Result, err error) {
	result := AuditResultOK
	switch {
	case res == nil || (err != nil && !errors.Is(err, audit.ErrRefused)):
		result = AuditResultError
	case len(res.Partial) > 0:
		result = AuditResultPartial
	}
	m.auditRuns.WithLabelValues(result).Inc()
	if res == nil {
		return
	}
	for _, kind := range audit.FindingKinds() {
		if len(res.Partial) > 0 && (kind == audit.FindingOrphanedConsumer || kind == audit.FindingStaleProvider) {
			continue
		}
		m.auditFindings.WithLabelValues(kind).Set(float64(res.Count(kind)))
	}
}

func (m *reconcilerMetrics) observeGate(g GateState) {
	v := 0.0
	if g.Open {
		v = 1
	}
	m.gateOpen.Set(v)
	m.gateMin.Set(float64(g.MinVersion))
	m.gateRequired.Set(float64(g.Required))
	m.gateComputes.Set(float64(g.Computes))
	m.unknown.Set(float64(len(g.Unknown)))
}
