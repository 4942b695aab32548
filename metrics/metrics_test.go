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

// TestAPIRelease: the release info and the release-change gauge carry
// what 'serve' started with.
func TestAPIRelease(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterAPIRelease(reg, APIRelease{Release: "15.0.0", Source: "default", EnforceScope: true, EnforceNewDefaults: false, Remembered: "8.0.0", Changed: true}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP placement_syncd_api_release_changed 1 when the Placement release served differs from the one the database was last served under and the configuration does not name api.release (from: the remembered release, unknown when the database recorded none; to: the release served), else 0.
# TYPE placement_syncd_api_release_changed gauge
placement_syncd_api_release_changed{from="8.0.0",to="15.0.0"} 1
# HELP placement_syncd_api_release_info A metric with a constant value of 1, labeled by the Placement release the API follows (api.release), whether the configuration names it (source config) or it is the binary's default, and the effective enforce_scope and enforce_new_defaults.
# TYPE placement_syncd_api_release_info gauge
placement_syncd_api_release_info{enforce_new_defaults="false",enforce_scope="true",release="15.0.0",source="default"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "placement_syncd_api_release_info", "placement_syncd_api_release_changed"); err != nil {
		t.Error(err)
	}
	if err := RegisterAPIRelease(reg, APIRelease{Release: "8.0.0"}); err == nil {
		t.Error("registered twice without an error")
	}
}
