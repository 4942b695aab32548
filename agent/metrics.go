package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/drivers"
)

// metrics are the agent's collectors, registered on Options.Registerer.
type metrics struct {
	syncs            *prometheus.CounterVec
	syncDuration     *prometheus.HistogramVec
	lastSuccess      *prometheus.GaugeVec
	writes           *prometheus.CounterVec
	conflicts        *prometheus.CounterVec
	placementErrors  prometheus.Counter
	fallbackDeletes  prometheus.Counter
	unavailable      *prometheus.GaugeVec
	programs         *prometheus.CounterVec
	devicesFailed    prometheus.Gauge
	placementUp      prometheus.Gauge
	serviceHeartbeat *prometheus.CounterVec
}

const namespace = "placement_syncd"

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "syncs_total",
			Help: "Agent sync passes per driver, by result (success, error, source_error).",
		}, []string{"driver", "result"}),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "agent", Name: "sync_duration_seconds",
			Help:    "Duration of one driver's sync pass.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 9),
		}, []string{"driver"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agent", Name: "last_success_timestamp_seconds",
			Help: "Unix time of the driver's last fully successful sync.",
		}, []string{"driver"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "placement_writes_total",
			Help: "Writes made to Placement, by operation.",
		}, []string{"op"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "placement_conflicts_total",
			Help: "409 answers (generation races, inventory in use) that were re-read and retried, by operation.",
		}, []string{"op"}),
		placementErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "placement_errors_total",
			Help: "Placement calls that failed because it was unreachable or answered 5xx.",
		}),
		fallbackDeletes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "inventory_fallback_deletes_total",
			Help: "Unavailable inventories deleted because the server is older than microversion 1.26.",
		}),
		unavailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agent", Name: "unavailable_resources",
			Help: "Inventories held back (reserved == total) in the last pass, by driver and reason.",
		}, []string{"driver", "reason"}),
		programs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "fpga_programs_total",
			Help: "FPGA programming requests, by result (success, failure, timeout, refused).",
		}, []string{"result"}),
		devicesFailed: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agent", Name: "fpga_devices_failed",
			Help: "FPGA devices whose last programming failed or timed out (kept reserved).",
		}),
		placementUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agent", Name: "placement_up",
			Help: "1 if the last pass reached Placement, else 0.",
		}),
		serviceHeartbeat: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agent", Name: "service_heartbeats_total",
			Help: "Service record posts, by result (success, error).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.syncs, m.syncDuration, m.lastSuccess, m.writes, m.conflicts,
		m.placementErrors, m.fallbackDeletes, m.unavailable, m.programs, m.devicesFailed, m.placementUp, m.serviceHeartbeat} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// setUnavailable publishes one driver's per-reason counts (every reason,
// zero included, so that a cleared reason drops to 0).
func (m *metrics) setUnavailable(driver string, counts map[string]int) {
	for _, r := range drivers.Reasons {
		m.unavailable.WithLabelValues(driver, r).Set(float64(counts[r]))
	}
}
