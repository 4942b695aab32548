package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/daemon"
	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func cmdServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs, common := newConfigFlagSet("serve", "placement-syncd serve [--config FILE] [--placement-conf FILE] [--listen ADDR] [--db PATH|URL] [--log-level LEVEL]", stderr,
		configSpec{placementConf: true})
	defaults := config.Default()
	listen := fs.String("listen", "", "`address` to listen on, overriding api.listen (default \""+defaults.API.Listen+"\")")
	logLevel := fs.String("log-level", "", "log `level` (debug, info, warn, error), overriding log.level (default \""+defaults.Log.Level+"\")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var overrides []config.Override
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			v := *listen
			overrides = append(overrides, config.Override{Key: "api.listen", Flag: "--listen", Set: func(c *config.Config) { c.API.Listen = v }})
		case "log-level":
			v := *logLevel
			overrides = append(overrides, config.Override{Key: "log.level", Flag: "--log-level", Set: func(c *config.Config) { c.Log.Level = v }})
		}
	})
	cfg, pc, err := common.load(overrides...)
	if err != nil {
		return err
	}
	if pc != nil && pc.Database != nil {
		if err := refusePlacementOwn(pc.Database); err != nil {
			return err
		}
	}
	log, err := assemble.NewLogger(cfg.Log, stderr)
	if err != nil {
		return usageError{err}
	}
	defer log.Sync() //nolint:errcheck // nothing useful to do if stderr is gone
	if pc != nil {
		log.Info("configuration read from placement.conf", zap.String("file", pc.Path), zap.String("database", dbDescription(cfg.Database)),
			zap.String("auth_strategy", cfg.API.AuthStrategy))
		if len(pc.Ignored) > 0 {
			log.Info("placement.conf options that mean nothing to placement-syncd, ignored", zap.String("file", pc.Path), zap.Strings("options", pc.Ignored))
		}
	}
	return serve(ctx, cfg, config.NamesRelease(common.path), log)
}

// serve builds what must work before anything listens (auth, the
// registry, the store) and runs the process; the store is closed only
// after every actor has returned. releaseNamed says whether the
// configuration names api.release rather than leaving it to the default.
func serve(ctx context.Context, cfg config.Config, releaseNamed bool, log *zap.Logger) error {
	auth, err := assemble.NewAPIAuth(cfg, releaseNamed)
	if err != nil {
		return usageError{err}
	}
	build := readBuildInfo()
	reg := assemble.NewRegistry(build)
	st, err := loadStore(ctx, cfg.Database, log, reg)
	if err != nil {
		return err
	}
	defer st.Close()
	return daemon.Serve(ctx, daemon.Process{Config: cfg, Store: st, Auth: auth, Registry: reg, Log: log, Build: build,
		Database: dbDescription(cfg.Database), ReleaseNamed: releaseNamed})
}

// loadStore opens the store and builds its read model before the API
// listens, so that the first request after a restart does not wait for
// it, and logs how long that took.
//
// Loading allocates almost only what it keeps, on a heap that grows from
// nothing to gigabytes at 100k hosts: collecting at every doubling, as
// the default GOGC does, was a quarter of a restart. It collects at every
// tripling instead while it loads, unless the operator set GOGC.
func loadStore(ctx context.Context, db config.DatabaseConfig, log *zap.Logger, reg prometheus.Registerer) (*ledger.Ledger, error) {
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
func openStore(ctx context.Context, u *dburl.URL, db config.DatabaseConfig, mode storeMode, log *zap.Logger, reg prometheus.Registerer) (*ledger.Ledger, error) {
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
