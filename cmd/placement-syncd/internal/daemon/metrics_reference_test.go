package daemon

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/golden"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

var update = flag.Bool("update", false, "rewrite the generated "+metricsRefName)

const (
	metricsRefPath = "../../../../docs/metrics.md"
	metricsRefName = "docs/metrics.md"
	// regenerateMetrics is the one command that rewrites it.
	regenerateMetrics = "go test ./cmd/placement-syncd/internal/daemon -run TestMetricsReference -update"
)

// TestMetricsReference keeps docs/metrics.md the list of every metric
// family serve can export: serve runs with everything enabled (the API,
// a MariaDB store shared by replicas, the reconciler, the agent with its
// three drivers), every collector its components register is described,
// and the registry is gathered for the types. With -update it writes the
// file.
func TestMetricsReference(t *testing.T) {
	fams := serveFamilies(t)
	doc, problems := renderMetrics(fams)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		return
	}
	golden.Check(t, metricsRefPath, metricsRefName, doc, *update, regenerateMetrics)
}

// recorder registers in a registry and keeps each collector.
type recorder struct {
	prometheus.Registerer
	mu  sync.Mutex
	all []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	if err := r.Registerer.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) collectors() []prometheus.Collector {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]prometheus.Collector(nil), r.all...)
}

// serveFamilies runs serve with everything enabled until every family
// its registry describes has a type (the inventory's appear once the
// agent has reported), and returns them.
func serveFamilies(t *testing.T) map[string]*family {
	cfg := everythingConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(core)
	build := assemble.Build{Version: "reference", Commit: "reference", GoVersion: "go", Platform: "linux/amd64"}
	reg := assemble.NewRegistry(build)
	rec := &recorder{Registerer: reg}
	u, err := cfg.Database.URL()
	if err != nil {
		t.Fatal(err)
	}
	st, err := dbstore.Open(ctx, u, dbstore.Options{Migrate: true, Create: true, Logger: log.Named("store"), Rules: ledger.Options{Registerer: rec}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	auth, err := assemble.NewAPIAuth(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Serve(runCtx, Process{Config: cfg, Store: st, Auth: auth, Registry: reg, Registerer: rec, Log: log, Build: build, Database: "reference"})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for {
		fams, err := gatherFamilies(rec.collectors(), reg)
		if err != nil {
			t.Fatal(err)
		}
		untyped := untypedFamilies(fams)
		started := logs.FilterMessage("placement-syncd started").Len() > 0
		if started && len(untyped) == 0 {
			return fams
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v", err)
		case <-ctx.Done():
			t.Fatalf("started %v; after %s these families have no type yet (no series, and not a vector): %v", started, time.Minute*2, untyped)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// everythingConfig is serve's configuration with every component on, on
// loopback port 0, over a fresh MariaDB database, with the agent's and
// the reconciler's sources in files.
func everythingConfig(t *testing.T) config.Config {
	maria := mariadbtest.Start(t)
	dir := t.TempDir()
	file := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const host = "reference-compute"
	cfg := config.Default()
	cfg.Database.Connection = maria.URL(maria.NewDatabase(t))
	cfg.API.Listen = "127.0.0.1:0"
	cfg.API.ShutdownGrace = time.Second
	cfg.Reconciler.Enabled, cfg.Reconciler.Listen = true, "127.0.0.1:0"
	cfg.Reconciler.StateFile = filepath.Join(dir, "reconciler-state.json")
	cfg.Reconciler.Jobs["audit"] = "@every 1h"
	cfg.Reconciler.Nova.File = file("nova.json", map[string]any{"hypervisors": []any{}, "services": []any{}, "servers": []any{}, "migrations": []any{},
		"aggregates": []any{map[string]any{"uuid": "a99a0000-0000-4000-8000-000000000001", "name": "az1", "hosts": []string{},
			"metadata": map[string]string{"availability_zone": "az1"}}},
		"flavors": []any{
			// Fits the static hosts (VCPU only), one of them held back.
			map[string]any{"id": "1", "name": "vcpu.1", "vcpus": 1, "ram": 1, "disk": 0, "os-flavor-access:is_public": true,
				"extra_specs": map[string]string{"resources:MEMORY_MB": "0"}},
			map[string]any{"id": "2", "name": "bad", "vcpus": 1, "ram": 1, "disk": 0, "extra_specs": map[string]string{"hw:cpu_policy": "sometimes"}},
		}})
	cfg.Capacity = config.CapacityConfig{Enabled: true, Refresh: time.Minute, DefaultZone: "nova", PerHost: true, OSCapacityMetrics: true}
	cfg.Agent.Host, cfg.Agent.Interval = host, time.Second
	cfg.Agent.Local.Listen, cfg.Agent.Local.Token = "127.0.0.1:0", "reference-token"
	cfg.Agent.Static.Enabled = true
	cfg.Agent.Static.File = file("static.json", map[string]any{"providers": []map[string]any{{
		"uuid": "c0de0000-0000-4000-8000-000000000001", "name": host,
		"inventories": map[string]any{"VCPU": map[string]any{"total": 16}},
	}, {
		"uuid": "c0de0000-0000-4000-8000-000000000002", "name": "reference-held",
		"inventories": map[string]any{"VCPU": map[string]any{"total": 8, "unavailable": "maintenance"}},
	}}})
	cfg.Agent.Ironic.Enabled = true
	cfg.Agent.Ironic.File = file("ironic.json", map[string]any{"nodes": []map[string]any{{
		"uuid": "b0b00000-0000-4000-8000-000000000001", "name": "bm-1", "resource_class": "baremetal.gold",
		"power_state": "power off", "provision_state": "available", "maintenance": false, "traits": []string{},
	}}})
	cfg.Agent.FPGA.Enabled = true
	cfg.Agent.FPGA.File = file("fpga.json", map[string]any{"devices": []map[string]any{{
		"pci_address": "0000:5e:00.0", "vendor": "8086", "product": "0b30", "function": "gzip-v1", "regions": 2,
	}}})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}
