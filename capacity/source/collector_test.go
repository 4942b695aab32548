package source

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/capacity/count"
)

func containsOwner(q string) bool { return strings.Contains(q, "OWNER_NOVA") }

func metricValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// scrape gathers reg into "name{v1,v2,...}" -> value, label values in
// the order of their names, as Gather sorts them.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var vals []string
			for _, l := range m.GetLabel() {
				vals = append(vals, l.GetValue())
			}
			out[f.GetName()+"{"+strings.Join(vals, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestCollector_SmallWorld: every series equals Count's report on the
// same input, and the report is what the small world gives by hand.
func TestCollector_SmallWorld(t *testing.T) {
	snap := smallWorld()
	src := loaded(t, novaFile(t))
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(fixedStore{snap}, src, CollectorOptions{PerHost: true, OSCapacity: true}, zap.NewNop()))
	got := scrape(t, reg)

	in, _ := src.Input(snap)
	rep := count.Count(in)
	want := map[string]float64{
		"placement_syncd_capacity_aggregate_info{" + aggA + ",rack-a,az1}": 1,
		"placement_syncd_capacity_aggregate_info{" + aggB + ",gold,}":      1,
	}
	for _, f := range rep.Flavors {
		if f.Err != "" {
			want["placement_syncd_flavor_untranslatable{"+f.Name+","+f.Err+"}"] = 1
			continue
		}
		want["placement_syncd_flavor_capacity{"+f.Name+",cloud}"] = float64(f.Cloud)
		for z, n := range f.Zones {
			want["placement_syncd_flavor_capacity{"+f.Name+",zone:"+z+"}"] = float64(n)
		}
		for a, n := range f.Aggregates {
			want["placement_syncd_flavor_capacity{"+f.Name+",aggregate:"+a+"}"] = float64(n)
		}
		for r, n := range f.HeldBack {
			want["placement_syncd_flavor_capacity_held_back{"+f.Name+","+r+"}"] = float64(n)
		}
		public := map[bool]string{true: "True", false: "False"}[f.Public]
		want["openstack_free_capacity_by_flavor_total{"+f.Name+","+public+"}"] = float64(f.Cloud)
		for _, h := range f.Hosts {
			if h.Count > 0 {
				want["placement_syncd_flavor_capacity_host{"+f.Name+","+h.Name+"}"] = float64(h.Count)
				az, project := osCapacityAggregates(h.Aggregates, in.Aggregates)
				want["openstack_free_capacity_hypervisor_by_flavor{"+az+","+f.Name+","+h.Name+","+project+"}"] = float64(h.Count)
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (Count's report)", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("series %s not in Count's report", k)
		}
	}
	// By hand: small fits 8 on h1, 4 on h2, 2 on h3 (memory), none on h4
	// until its VCPU is released (4).
	for k, v := range map[string]float64{
		"placement_syncd_flavor_capacity{small,cloud}":                  14,
		"placement_syncd_flavor_capacity{small,zone:az1}":               12,
		"placement_syncd_flavor_capacity{small,zone:nova}":              2,
		"placement_syncd_flavor_capacity{small,aggregate:" + aggB + "}": 4,
		"placement_syncd_flavor_capacity_held_back{small,maintenance}":  4,
		"placement_syncd_flavor_capacity{big,cloud}":                    1,
		"openstack_free_capacity_by_flavor_total{big,False}":            1,
		// Labels by name: az_aggregate, flavor_name, hypervisor, project_aggregate.
		"openstack_free_capacity_hypervisor_by_flavor{az1,small,h2,multiple}": 4,
		"openstack_free_capacity_hypervisor_by_flavor{,small,h3,}":            2,
		"openstack_free_capacity_hypervisor_by_flavor{az1,small,h1,rack-a}":   8,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if !strings.Contains(strings.Join(keys(got), " "), "placement_syncd_flavor_untranslatable{bad,") {
		t.Error("the flavor Nova refuses has no untranslatable series")
	}
}

// TestCollector_Optional: per-host and os-capacity families only when
// asked for; nothing before Nova's first good read.
func TestCollector_Optional(t *testing.T) {
	snap := smallWorld()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(fixedStore{snap}, loaded(t, novaFile(t)), CollectorOptions{}, zap.NewNop()))
	for k := range scrape(t, reg) {
		if strings.HasPrefix(k, "openstack_") || strings.HasPrefix(k, "placement_syncd_flavor_capacity_host") {
			t.Errorf("%s without its option", k)
		}
	}
	empty := prometheus.NewRegistry()
	empty.MustRegister(NewCollector(fixedStore{snap}, New(Options{Nova: failingNova{}, Refresh: 1}), CollectorOptions{PerHost: true}, zap.NewNop()))
	if got := scrape(t, empty); len(got) != 0 {
		t.Errorf("series before Nova was read: %v", got)
	}
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCollector_Concurrent: scrapes, route answers and refreshes at once
// share the Source's last read (run with -race).
func TestCollector_Concurrent(t *testing.T) {
	snap := smallWorld()
	src := loaded(t, novaFile(t))
	src.opts.OwnerNova = func() bool { return true }
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(fixedStore{snap}, src, CollectorOptions{PerHost: true, OSCapacity: true}, zap.NewNop()))
	want := scrape(t, reg)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := scrape(t, reg); len(got) != len(want) {
				t.Errorf("a concurrent scrape gave %d series, want %d", len(got), len(want))
			}
		})
		wg.Go(func() {
			if _, err := src.CapacityReport(snap, "small", ByHost); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := src.Refresh(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
