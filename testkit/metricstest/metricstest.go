// Package metricstest checks and reads a Prometheus text exposition in
// tests: the linter promtool uses, then samples by name and labels.
package metricstest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed exposition.
type Scrape struct {
	Raw      []byte
	Families map[string]*dto.MetricFamily
}

// Parse lints raw as promtool would, failing the test for each problem,
// and parses it.
func Parse(t testing.TB, raw []byte) Scrape {
	t.Helper()
	problems, err := promlint.New(bytes.NewReader(raw)).Lint()
	if err != nil {
		t.Fatalf("lint metrics: %v", err)
	}
	for _, p := range problems {
		if borrowedName(p.Metric) {
			continue
		}
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return Scrape{Raw: raw, Families: fams}
}

// borrowedName reports a family whose name is another exporter's, kept
// as that exporter spells it so that its dashboards work unchanged:
// os-capacity's gauges end in _total (capacity.os_capacity_metrics).
func borrowedName(name string) bool {
	switch name {
	case "openstack_free_capacity_by_flavor_total", "openstack_free_capacity_hypervisor_by_flavor":
		return true
	}
	return false
}

// Value is the sample of family name whose labels are exactly labels
// ("k=v" pairs, any order); a histogram gives its count. ok is false
// without such a series.
func (s Scrape) Value(name string, labels ...string) (v float64, ok bool) {
	want := slices.Sorted(slices.Values(labels))
	for _, m := range s.Families[name].GetMetric() {
		got := make([]string, 0, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// Is reports whether the series exists with value v.
func (s Scrape) Is(v float64, name string, labels ...string) bool {
	got, ok := s.Value(name, labels...)
	return ok && got == v
}

// Describe names the series and its value, for failure messages.
func (s Scrape) Describe(name string, labels ...string) string {
	v, ok := s.Value(name, labels...)
	if !ok {
		return fmt.Sprintf("%s%v missing", name, labels)
	}
	return fmt.Sprintf("%s%v = %g", name, labels, v)
}

// Grep returns the exposition's lines that mention s, for failure
// messages.
func (s Scrape) Grep(sub string) string {
	var b strings.Builder
	for line := range strings.Lines(string(s.Raw)) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}
