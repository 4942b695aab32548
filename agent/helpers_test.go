package agent_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
)

// env is one agent under test with its observability.
type env struct {
	agent *agent.Agent
	reg   *prometheus.Registry
	logs  *observer.ObservedLogs
}

func newEnv(t *testing.T, placementURL string, ds []drivers.Driver, edit func(*agent.Options)) *env {
	t.Helper()
	pc, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: placementURL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	reg := prometheus.NewRegistry()
	opts := agent.Options{
		Placement: pc, Drivers: ds, Host: "host-a", Version: "test",
		Logger: zap.New(core), Registerer: reg, BackoffBase: 10e6,
	}
	if edit != nil {
		edit(&opts)
	}
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{agent: a, reg: reg, logs: logs}
}

func ironicDriver(t *testing.T, double *ironictest.IronicDouble) *ironic.Driver {
	t.Helper()
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// counter reads one counter/gauge value with the given labels.
func (e *env) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			}
		}
	}
	return 0
}

var _ = testutil.ToFloat64

// nodeUUID makes a distinct, valid uuid per test and index.
func nodeUUID(prefix, i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", prefix, i)
}
