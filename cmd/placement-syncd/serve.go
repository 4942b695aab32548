package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
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

func cmdServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs, common := newConfigFlagSet("serve", "placement-syncd serve [--config FILE] [--placement-conf FILE] [--listen ADDR] [--db PATH|URL] [--log-level LEVEL]", stderr)
	placementConfPath := fs.String("placement-conf", "", "OpenStack Placement's placement.conf `file` to start from (the --config YAML overrides it)")
	listen := fs.String("listen", "", "`address` to listen on, overriding api.listen (default \""+defaultListen+"\")")
	logLevel := fs.String("log-level", "", "log `level` (debug, info, warn, error), overriding log.level (default \""+defaultLogLevel+"\")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	overrides := common.overrides(fs)
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			v := *listen
			overrides = append(overrides, override{Key: "api.listen", Flag: "--listen", Set: func(c *Config) { c.API.Listen = v }})
		case "log-level":
			v := *logLevel
			overrides = append(overrides, override{Key: "log.level", Flag: "--log-level", Set: func(c *Config) { c.Log.Level = v }})
		}
	})
	cfg, log, err := configureServe(common.config, *placementConfPath, overrides, stderr)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // nothing useful to do if stderr is gone
	return serve(ctx, cfg, log)
}

// serve opens the store, starts every actor in one errgroup and waits for
// them; the store is closed only after they have all returned.
func serve(ctx context.Context, cfg Config, log *zap.Logger) error {
	reg := newRegistry()
	mx := newMetricsEndpoint(cfg.Metrics, reg, log)
	opts := placementsrv.Options{
		Logger: log.Named("api"),
		Auth:   cfg.API.AuthStrategy,

		RandomizeAllocationCandidates: cfg.API.AllocationCandidates.Randomize,
		MaxAllocationCandidates:       cfg.API.AllocationCandidates.maxCandidates(),
		AllocationCandidatesOrder:     cfg.API.AllocationCandidates.Order,
		OptimizeForWideProviderTrees:  cfg.API.AllocationCandidates.OptimizeForWideProviderTrees,

		Registerer:           reg,
		MetricsHandler:       mx.onAPI(),
		OmitOpenStackMetrics: !cfg.Metrics.OpenStackCompat,
		Limits:               apiLimits(cfg.API),
		MaxStaleness:         cfg.Database.ChangeFeed.MaxStaleness,
	}
	if err := authOptions(cfg, &opts); err != nil {
		return usageError{err}
	}
	st, err := loadStore(ctx, cfg.Database, log, reg)
	if err != nil {
		return err
	}
	defer st.Close()

	ln, err := net.Listen("tcp", cfg.API.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.API.Listen, err)
	}
	opts.Store = st
	opts.MaxMicroversion = maxMicroversion(cfg.API)
	// The reconciler needs the API's address, and the API its gate.
	extra, err := withReplicasAndReconciler(ctx, cfg, st, ln.Addr().String(), log, &opts)
	if err != nil {
		ln.Close()
		return err
	}
	srv, err := placementsrv.New(opts)
	if err != nil {
		ln.Close()
		closeListeners(extra)
		return err
	}
	actors := map[string]actor{
		"api": apiServer{srv: srv, ln: ln, grace: cfg.API.ShutdownGrace},
	}
	maps.Copy(actors, extra)
	// All-in-one: the agent reports to this API and heartbeats to this
	// reconciler.
	agentActors, closeDrivers, err := withAgent(ctx, cfg, ln.Addr().String(), reconcilerEndpoint(extra), log, reg)
	if err != nil {
		closeListeners(actors)
		return err
	}
	defer closeDrivers()
	maps.Copy(actors, agentActors)
	if err := mx.addActor(actors, cfg.API.ShutdownGrace); err != nil {
		closeListeners(actors)
		return err
	}
	logExposure(cfg, log)
	log.Info("placement-syncd started",
		zap.String("version", readBuildInfo().Version),
		zap.String("listen", ln.Addr().String()),
		zap.String("metrics", mx.describe(ln.Addr().String())),
		zap.String("database", cfg.Database.name()),
		zap.String("auth_strategy", cfg.API.AuthStrategy),
		zap.Bool("reconciler", cfg.Reconciler.Enabled),
		zap.Bool("agent", agentEnabled(cfg.Agent)))

	if err := runActors(ctx, actors); err != nil {
		return err
	}
	log.Info("placement-syncd stopped")
	return nil
}

// apiLimits are the API listener's timeouts and connection limit.
func apiLimits(c APIConfig) httpserve.Limits {
	return httpserve.Limits{ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout, IdleTimeout: c.IdleTimeout, MaxConnections: c.MaxConnections}
}

// loadStore opens the store and builds its read model before the API
// listens, so that the first request after a restart does not wait for
// it, and logs how long that took.
//
// Loading allocates almost only what it keeps, on a heap that grows from
// nothing to gigabytes at 100k hosts: collecting at every doubling, as
// the default GOGC does, was a quarter of a restart. It collects at every
// tripling instead while it loads, unless the operator set GOGC.
func loadStore(ctx context.Context, db DatabaseConfig, log *zap.Logger, reg prometheus.Registerer) (*ledger.Ledger, error) {
	start := time.Now()
	u, err := db.URL()
	if err != nil {
		return nil, err
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(loadGCPercent))
	}
	st, err := openStore(ctx, u, db, storeMode{migrate: db.AutoMigrate}, log, reg)
	if err != nil {
		return nil, err
	}
	snap, err := st.Snapshot(ctx)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("build the read model: %w", err)
	}
	log.Info("database loaded", zap.Int("providers", len(snap.Providers)), zap.Duration("took", time.Since(start)))
	return st, nil
}

// loadGCPercent is GOGC while the store loads.
const loadGCPercent = 200

// storeMode is how openStore treats the schema: migrate applies pending
// migrations, adopt lets them add our tables beside someone else's.
type storeMode struct{ migrate, adopt bool }

// openStore opens the database u, which db names, creating a database
// file's directory if needed. Schema errors match the store's sentinels
// so that they map to exit code 3.
func openStore(ctx context.Context, u *dburl.URL, db DatabaseConfig, mode storeMode, log *zap.Logger, reg prometheus.Registerer) (*ledger.Ledger, error) {
	if len(u.Ignored) > 0 {
		log.Info("database URL options without meaning here are ignored", zap.Strings("options", u.Ignored))
	}
	st, err := dbstore.Open(ctx, u, dbstore.Options{
		Migrate:     mode.migrate,
		Adopt:       mode.adopt,
		Create:      true,
		BusyTimeout: db.BusyTimeout,
		Logger:      log.Named("store"),
		Rules:       ledger.Options{Registerer: reg},
	})
	if se := (*store.SchemaError)(nil); errors.As(err, &se) {
		return nil, schemaMismatch(dbName(u), se.Current, se.Latest, "database.auto_migrate is false")
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}
