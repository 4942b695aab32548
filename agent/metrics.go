package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// agentMetrics are the agent's collectors, registered on Options.Registerer.
type agentMetrics struct {
	syncs            *prometheus.CounterVec
	syncDuration     *prometheus.HistogramVec
	lastSuccess      *prometheus.GaugeVec
	writes           *prometheus.CounterVec
	conflicts        *prometheus.CounterVec
	placementErrors  prometheus.Counter
	fallbackDeletes  prometheus.Counter
	unavailable      *prometheus.GaugeVec
	deferred         *prometheus.GaugeVec
	programs         *prometheus.CounterVec
	devicesFailed    prometheus.Gauge
	placementUp      prometheus.Gauge
	serviceHeartbeat *prometheus.CounterVec
	requests         *prometheus.CounterVec
	passRequests     *prometheus.GaugeVec
	reread           *prometheus.CounterVec
	cacheHits        *prometheus.CounterVec
	retired          *prometheus.CounterVec
	retiring         *prometheus.GaugeVec
	retireRefused    *prometheus.CounterVec
	held             *prometheus.GaugeVec
	cached           prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*agentMetrics, error) {
	// A pass takes from 5 ms (nothing to write) to minutes (a thousand
	// new nodes against a slow Placement): buckets up to about 5.5 min.
	passBuckets := prometheus.ExponentialBuckets(0.005, 4, 9)
	s := metrics.NewSet("agent")
	m := &agentMetrics{
		syncs:        s.CounterVec("syncs_total", "Agent sync passes per driver, by result (success, error, source_error).", "driver", "result"),
		syncDuration: s.HistogramVec("sync_duration_seconds", "Duration of one driver's sync pass.", passBuckets, "driver"),
		lastSuccess:  s.GaugeVec("last_success_timestamp_seconds", "Unix time of the driver's last fully successful sync.", "driver"),
		writes:       s.CounterVec("placement_writes_total", "Writes made to Placement, by operation.", "op"),
		conflicts: s.CounterVec("placement_conflicts_total",
			"409 answers (generation races, inventory in use) that were re-read and retried, by operation.", "op"),
		placementErrors: s.Counter("placement_errors_total", "Placement calls that failed because it was unreachable or answered 5xx."),
		fallbackDeletes: s.Counter("inventory_fallback_deletes_total",
			"Unavailable inventories deleted because the server is older than microversion 1.26."),
		unavailable: s.GaugeVec("unavailable_resources",
			"Inventories held back (reserved == total) in the last pass, by driver and reason.", "driver", "reason"),
		deferred: s.GaugeVec("providers_deferred",
			"Providers the agent leaves to the service that reports them and writes nothing to (they carry its trait; "+
				"agent.ironic.defer_to_nova), in the driver's last successful pass.", "driver"),
		programs: s.CounterVec("fpga_programs_total",
			"FPGA programming requests, by result (success, failure, timeout, refused).", "result"),
		devicesFailed:    s.Gauge("fpga_devices_failed", "FPGA devices whose last programming failed or timed out (kept reserved)."),
		placementUp:      s.Gauge("placement_up", "1 if the last pass reached Placement, else 0."),
		serviceHeartbeat: s.CounterVec("service_heartbeats_total", "Service record posts, by result (success, error).", "result"),
		requests: s.CounterVec("placement_requests_total",
			"HTTP requests sent to Placement, by kind (list: GET /resource_providers, read: other GETs, write).", "kind"),
		passRequests: s.GaugeVec("pass_requests",
			"HTTP requests the driver's last pass sent to Placement, by kind (list, read, write).", "driver", "kind"),
		reread: s.CounterVec("providers_reread_total",
			"Providers whose inventories and traits were read from Placement rather than taken from the agent's cache, "+
				"by reason (uncached, generation, aggregates, refresh, conflict).", "reason"),
		cacheHits: s.CounterVec("cache_hits_total",
			"Providers whose state was taken from the agent's cache because their listed generation had not moved.", "driver"),
		retired: s.CounterVec("providers_retired_total",
			"Vanished providers retired, by action (deleted: no allocations; reserved: inventory reserved in full while allocations remain; "+
				"reserved_refused: reserved in full while max_retirements refuses).",
			"driver", "action"),
		retiring: s.GaugeVec("providers_retiring",
			"Vanished providers kept, reserved in full, until their allocations go (last pass).", "driver"),
		retireRefused: s.CounterVec("retirements_refused_total",
			"Passes that did not retire vanished providers, by reason (empty_answer, max_retirements).", "driver", "reason"),
		cached: s.Gauge("cached_providers", "Provider states the agent holds in its cache (providers it reports, or retires)."),
		held: s.GaugeVec("providers_held_refused",
			"Vanished providers reserved in full because max_retirements refused to retire them (last pass); "+
				"see docs/operations.md for recovery.", "driver"),
	}
	return m, s.Register(reg)
}

// setRequests publishes one driver pass's requests by kind.
func (m *agentMetrics) setRequests(driver string, r placementclient.Requests) {
	for kind, n := range r.ByKind() {
		m.requests.WithLabelValues(kind).Add(float64(n))
		m.passRequests.WithLabelValues(driver, kind).Set(float64(n))
	}
}

// setUnavailable publishes one driver's per-reason counts (every reason,
// zero included, so that a cleared reason drops to 0).
func (m *agentMetrics) setUnavailable(driver string, counts map[string]int) {
	for _, r := range drivers.Reasons {
		m.unavailable.WithLabelValues(driver, r).Set(float64(counts[r]))
	}
}
