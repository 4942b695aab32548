// Package daemon runs placement-syncd's long-lived processes: 'serve'
// (the API, with the reconciler, the agent and the change feed of
// replicas in the same process when configured) and 'agent'. Each part
// is an actor; all run in one errgroup, and the first to fail stops the
// rest.
package daemon

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
)

// actor is a long-running component: Run blocks until ctx ends or the
// component fails, and returns nil after a clean shutdown.
type actor interface {
	Run(ctx context.Context) error
}

// apiServer adapts placementsrv.Server to actor, owning its listener.
type apiServer struct {
	srv   *placementsrv.Server
	ln    net.Listener
	grace time.Duration
}

func (a apiServer) Run(ctx context.Context) error { return a.srv.Run(ctx, a.ln, a.grace) }

// Process is what 'serve' runs: the configuration, and what its caller
// built from it before anything listens (a bad policy file or database
// stops start-up there).
type Process struct {
	Config   config.Config
	Store    *ledger.Ledger
	Auth     assemble.APIAuth
	Registry *prometheus.Registry
	// Registerer, when set, is where the components register their
	// metrics instead (it must register them in Registry too): the
	// metrics reference records each collector through it.
	Registerer prometheus.Registerer
	Log        *zap.Logger
	Build      assemble.Build
	// Database is how the start-up log names the database.
	Database string
	// ReleaseNamed says whether the configuration names api.release
	// (checkRelease).
	ReleaseNamed bool
}

// Serve listens, starts every actor of the process in one errgroup and
// waits for them. The caller closes the store once Serve has returned.
func Serve(ctx context.Context, p Process) error {
	cfg, st, log := p.Config, p.Store, p.Log
	var reg prometheus.Registerer = p.Registry
	if p.Registerer != nil {
		reg = p.Registerer
	}
	rel, err := startRelease(ctx, p, reg)
	if err != nil {
		return err
	}
	mx := newMetricsEndpoint(cfg.Metrics, p.Registry, log)
	ln, err := net.Listen("tcp", cfg.API.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.API.Listen, err)
	}
	repl, err := newReplicas(cfg, st, log, reg)
	if err != nil {
		ln.Close()
		return err
	}
	actors := repl.actors
	// The reconciler needs the API's address, and the API its gate.
	rec, err := startReconciler(ctx, cfg, ln.Addr().String(), repl.lead, log, reg)
	if err != nil {
		ln.Close()
		return err
	}
	var gate placementsrv.OwnerNovaGate
	if rec.r != nil {
		gate = rec.r
		maps.Copy(actors, rec.actors)
	}
	opts, capa, err := apiOptions(ctx, p, gate, mx.onAPI(), actors, reg)
	if err != nil {
		ln.Close()
		closeListeners(actors)
		return err
	}
	srv, err := placementsrv.New(opts)
	if err != nil {
		ln.Close()
		closeListeners(actors)
		return err
	}
	actors["api"] = apiServer{srv: srv, ln: ln, grace: cfg.API.ShutdownGrace}
	// All-in-one: the agent reports to this API and heartbeats to this
	// reconciler.
	agentActors, closeDrivers, err := withAgent(ctx, cfg, p.Build.Version, ln.Addr().String(), rec.endpoint, log, reg)
	if err != nil {
		closeListeners(actors)
		return err
	}
	defer closeDrivers()
	maps.Copy(actors, agentActors)
	capa.withAgent(agentActors)
	if err := mx.addActor(actors, cfg.API.ShutdownGrace); err != nil {
		closeListeners(actors)
		return err
	}
	assemble.LogExposure(cfg, log)
	log.Info("placement-syncd started",
		zap.String("version", p.Build.Version),
		zap.String("listen", ln.Addr().String()),
		zap.String("metrics", mx.describe(ln.Addr().String())),
		zap.String("database", p.Database),
		zap.String("auth_strategy", cfg.API.AuthStrategy),
		zap.String("release", rel.Release), zap.String("release_source", rel.Source),
		zap.Bool("enforce_scope", rel.EnforceScope), zap.Bool("enforce_new_defaults", rel.EnforceNewDefaults),
		zap.Bool("reconciler", cfg.Reconciler.Enabled), zap.Bool("capacity", cfg.Capacity.Enabled),
		zap.Bool("agent", agentEnabled(cfg.Agent)))

	if err := runActors(ctx, actors); err != nil {
		return err
	}
	log.Info("placement-syncd stopped")
	return nil
}

// apiOptions are the API's options, with the pre-filter's gauge
// registered and capacity by flavor started (its refresher in actors)
// when enabled.
func apiOptions(ctx context.Context, p Process, gate placementsrv.OwnerNovaGate, metricsHandler http.Handler,
	actors map[string]actor, reg prometheus.Registerer) (placementsrv.Options, *capacity, error) {
	capa, err := startCapacity(ctx, p.Config, p.Store, gate, actors, p.Log, reg)
	if err != nil {
		return placementsrv.Options{}, nil, err
	}
	opts := assemble.APIOptions(p.Config, p.Store, p.Auth, gate, metricsHandler, p.Log, reg)
	opts.Capacity = capa.reporter()
	if err := prefilterGauge(reg, opts.OwnerNovaPrefilter, gate); err != nil {
		return placementsrv.Options{}, nil, err
	}
	return opts, capa, nil
}
