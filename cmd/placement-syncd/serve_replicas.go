package main

import (
	"context"
	"fmt"
	"maps"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/leader"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// leaseName is the lease the reconciler's leader holds.
const leaseName = "reconciler"

// replicaName names this process among replicas: host and process id.
func replicaName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// followActor keeps a replica's memory up to date with the others'
// writes through the change feed.
type followActor struct {
	st   *ledger.Ledger
	opts ledger.FollowOptions
}

func (f followActor) Run(ctx context.Context) error {
	f.st.Follow(ctx, f.opts)
	return nil
}

// withReplicas adds, for a store shared with other replicas, the actor
// that follows the change feed, and, when the reconciler runs, the
// election of its leader, which it returns. A store of its own (SQLite)
// adds nothing and no election: this process runs the jobs.
func withReplicas(cfg config.Config, st *ledger.Ledger, log *zap.Logger, reg prometheus.Registerer) (map[string]actor, *leader.Elector, error) {
	if !st.Replicated() {
		return nil, nil, nil
	}
	st.SetConsistentReads(cfg.Database.ChangeFeed.ConsistentReads)
	flog := log.Named("feed")
	actors := map[string]actor{"change-feed": followActor{st: st, opts: ledger.FollowOptions{
		Interval:  cfg.Database.ChangeFeed.PollInterval,
		Retention: cfg.Database.ChangeFeed.Retention,
		OnError:   func(err error) { flog.Warn("change feed", zap.Error(err)) },
	}}}
	leases, ok := st.Shared().(store.Leases)
	if !cfg.Reconciler.Enabled || !ok {
		return actors, nil, nil
	}
	set := metrics.NewSet("reconciler")
	gauge := set.Gauge("leader", "1 while this replica holds the reconciler's lease and runs its jobs, 0 on a standby.")
	if err := set.Register(reg); err != nil {
		return nil, nil, err
	}
	e := leader.New(leases, leader.Options{Name: leaseName, Holder: replicaName(), TTL: cfg.Reconciler.Leader.LeaseTTL,
		Gauge: gauge, Logger: log.Named("leader")})
	actors["leader"] = actorFunc(e.Run)
	return actors, e, nil
}

// withReplicasAndReconciler adds the actors of withReplicas and of
// withReconciler, the reconciler elected and sharing heartbeats on a
// shared database.
func withReplicasAndReconciler(ctx context.Context, cfg config.Config, st *ledger.Ledger, apiAddr string, log *zap.Logger, api *placementsrv.Options) (map[string]actor, error) {
	actors, elected, err := withReplicas(cfg, st, log, api.Registerer)
	if err != nil {
		return nil, err
	}
	extra, err := withReconciler(ctx, cfg, apiAddr, log, api, func(ro *reconciler.Options) { leadership(st, elected, ro) })
	if err != nil {
		return nil, err
	}
	if actors == nil {
		return extra, nil
	}
	maps.Copy(actors, extra)
	return actors, nil
}

// leadership sets the reconciler's election, if any, and shares its
// heartbeats through the database.
func leadership(st *ledger.Ledger, e *leader.Elector, ro *reconciler.Options) {
	if e != nil {
		ro.Leader, ro.Replica = e.Leader, e.Holder()
	}
	if db, ok := st.Shared().(sharedRecordStore); ok {
		ro.Shared = sharedRecords{db: db, kind: "reconciler.services"}
	}
}

// sharedRecordStore is the MySQL backend's table of shared records.
type sharedRecordStore interface {
	PutSharedRecord(ctx context.Context, kind, name string, value []byte) error
	SharedRecords(ctx context.Context, kind string) ([][]byte, error)
}

// sharedRecords is one kind of them, as the reconciler uses it.
type sharedRecords struct {
	db   sharedRecordStore
	kind string
}

func (s sharedRecords) PutRecord(ctx context.Context, key string, value []byte) error {
	return s.db.PutSharedRecord(ctx, s.kind, key, value)
}

func (s sharedRecords) Records(ctx context.Context) ([][]byte, error) {
	return s.db.SharedRecords(ctx, s.kind)
}

// actorFunc is a Run function as an actor.
type actorFunc func(ctx context.Context) error

func (f actorFunc) Run(ctx context.Context) error { return f(ctx) }
