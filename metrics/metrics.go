// Package metrics builds the process's Prometheus registry and names our
// metrics; package metrics/endpoint serves it over HTTP.
//
// There is no global state: main calls NewRegistry once and hands the
// registry, as a prometheus.Registerer, to every component's Options. Each
// component builds its own metrics struct from it (see placementsrv's
// metrics.go) under the Namespace prefix; a component given no Registerer
// uses a private registry from Private, so it works, and its tests stay
// independent, without anybody scraping it.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Path is where the metrics are served, on the API listener or on a
// listener of their own.
const Path = "/metrics"

// Namespace prefixes every metric of ours: placement_syncd_<subsystem>_<name>.
const Namespace = "placement_syncd"

// BuildInfo labels the placement_syncd_build_info gauge.
type BuildInfo struct {
	Version   string
	Commit    string
	GoVersion string
}

// NewRegistry returns a registry holding the Go runtime and process
// collectors and the build_info gauge (value 1, the build in its labels).
func NewRegistry(bi BuildInfo) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newBuildInfo(bi),
	)
	return reg
}

// Private returns reg, or a fresh registry nobody scrapes when reg is nil:
// the rule for a component's Options.Registerer.
func Private(reg prometheus.Registerer) prometheus.Registerer {
	if reg == nil {
		return prometheus.NewRegistry()
	}
	return reg
}

func newBuildInfo(bi BuildInfo) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace,
		Name:      "build_info",
		Help:      "A metric with a constant value of 1, labeled by the version, commit and Go version placement-syncd was built from.",
		ConstLabels: prometheus.Labels{
			"version":   bi.Version,
			"commit":    bi.Commit,
			"goversion": bi.GoVersion,
		},
	})
	g.Set(1)
	return g
}

// Buckets for latency histograms, in seconds. HTTP and store latencies
// range from tens of microseconds (a read answered from memory) to
// seconds (a busy database lock), so the low end is finer than
// prometheus.DefBuckets.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// LatencyBuckets returns the histogram buckets for request and
// transaction latencies (a fresh slice each call, as callers may keep it).
func LatencyBuckets() []float64 { return append([]float64(nil), latencyBuckets...) }
