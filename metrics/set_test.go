package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSet: every kind is named under the namespace and subsystem with its
// help and labels, and registered; a second set of the same names is
// refused.
func TestSet(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewSet("test")
	c := s.Counter("c_total", "A counter.")
	cv := s.CounterVec("cv_total", "A counter vec.", "a", "b")
	g := s.Gauge("g", "A gauge.")
	gv := s.GaugeVec("gv", "A gauge vec.", "a")
	hv := s.HistogramVec("h_seconds", "A histogram.", []float64{1, 2}, "a")
	if err := s.Register(reg); err != nil {
		t.Fatal(err)
	}
	c.Inc()
	cv.WithLabelValues("x", "y").Add(2)
	g.Set(3)
	gv.WithLabelValues("x").Set(4)
	hv.WithLabelValues("x").Observe(1.5)
	const want = `
# HELP placement_syncd_test_c_total A counter.
# TYPE placement_syncd_test_c_total counter
placement_syncd_test_c_total 1
# HELP placement_syncd_test_cv_total A counter vec.
# TYPE placement_syncd_test_cv_total counter
placement_syncd_test_cv_total{a="x",b="y"} 2
# HELP placement_syncd_test_g A gauge.
# TYPE placement_syncd_test_g gauge
placement_syncd_test_g 3
# HELP placement_syncd_test_gv A gauge vec.
# TYPE placement_syncd_test_gv gauge
placement_syncd_test_gv{a="x"} 4
# HELP placement_syncd_test_h_seconds A histogram.
# TYPE placement_syncd_test_h_seconds histogram
placement_syncd_test_h_seconds_bucket{a="x",le="1"} 0
placement_syncd_test_h_seconds_bucket{a="x",le="2"} 1
placement_syncd_test_h_seconds_bucket{a="x",le="+Inf"} 1
placement_syncd_test_h_seconds_sum{a="x"} 1.5
placement_syncd_test_h_seconds_count{a="x"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	again := NewSet("test")
	again.Counter("c_total", "A counter.")
	if err := again.Register(reg); err == nil {
		t.Fatal("a name registered twice was accepted")
	}
}
