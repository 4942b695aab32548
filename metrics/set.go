package metrics

// A Set builds one component's Prometheus collectors, named
// placement_syncd_<subsystem>_<name> (Namespace), and registers
// them together, so that a component declares each metric in one line
// and cannot forget to register one.

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Set collects the collectors of one subsystem until Register.
type Set struct {
	subsystem string
	all       []prometheus.Collector
}

// NewSet starts a set for subsystem ("agent", "reconciler", "http").
func NewSet(subsystem string) *Set { return &Set{subsystem: subsystem} }

func add[C prometheus.Collector](s *Set, c C) C {
	s.all = append(s.all, c)
	return c
}

// Counter adds a counter.
func (s *Set) Counter(name, help string) prometheus.Counter {
	return add(s, prometheus.NewCounter(prometheus.CounterOpts(s.opts(name, help))))
}

// CounterVec adds a counter with labels.
func (s *Set) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return add(s, prometheus.NewCounterVec(prometheus.CounterOpts(s.opts(name, help)), labels))
}

// Gauge adds a gauge.
func (s *Set) Gauge(name, help string) prometheus.Gauge {
	return add(s, prometheus.NewGauge(prometheus.GaugeOpts(s.opts(name, help))))
}

// GaugeVec adds a gauge with labels.
func (s *Set) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return add(s, prometheus.NewGaugeVec(prometheus.GaugeOpts(s.opts(name, help)), labels))
}

// HistogramVec adds a histogram with buckets and labels.
func (s *Set) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return add(s, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: s.subsystem, Name: name, Help: help, Buckets: buckets,
	}, labels))
}

func (s *Set) opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: Namespace, Subsystem: s.subsystem, Name: name, Help: help}
}

// Register registers every collector added, in order, stopping at the
// first refusal (a name registered twice).
func (s *Set) Register(reg prometheus.Registerer) error {
	for _, c := range s.all {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
