package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewRegistry(t *testing.T) {
	reg := NewRegistry(BuildInfo{Version: "1.2.3", Commit: "abcdef", GoVersion: "go1.26.8"})
	want := `
# HELP placement_syncd_build_info A metric with a constant value of 1, labeled by the version, commit and Go version placement-syncd was built from.
# TYPE placement_syncd_build_info gauge
placement_syncd_build_info{commit="abcdef",goversion="go1.26.8",version="1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "placement_syncd_build_info"); err != nil {
		t.Error(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range fams {
		seen[mf.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if !seen[name] {
			t.Errorf("%s missing from the registry", name)
		}
	}
}

func TestPrivate(t *testing.T) {
	shared := prometheus.NewRegistry()
	if Private(shared) != prometheus.Registerer(shared) {
		t.Error("Private(reg) must return reg")
	}
	a, b := Private(nil), Private(nil)
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "x"})
	if err := a.Register(c); err != nil {
		t.Fatal(err)
	}
	// Two components given no registry must not collide.
	if err := b.Register(c); err != nil {
		t.Errorf("private registries are shared: %v", err)
	}
}

func TestLatencyBucketsIsACopy(t *testing.T) {
	b := LatencyBuckets()
	b[0] = 42
	if LatencyBuckets()[0] == 42 {
		t.Error("LatencyBuckets shares its backing array")
	}
}
