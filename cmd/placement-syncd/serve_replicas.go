package main

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/leader"
	"github.com/placement-syncd/placement-syncd/internal/metricset"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
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
func withReplicas(cfg Config, st *ledger.Ledger, log *zap.Logger, reg prometheus.Registerer) (map[string]actor, *leader.Elector, error) {
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
	leases := st.Leases()
	if !cfg.Reconciler.Enabled || leases == nil {
		return actors, nil, nil
	}
	set := metricset.New("reconciler")
	gauge := set.Gauge("leader", "1 while this replica holds the reconciler's lease and runs its jobs, 0 on a standby.")
	if err := set.Register(reg); err != nil {
		return nil, nil, err
	}
	e := leader.New(leases, leader.Options{Name: leaseName, Holder: replicaName(), TTL: cfg.Reconciler.Leader.LeaseTTL,
		Gauge: gauge, Logger: log.Named("leader")})
	actors["leader"] = actorFunc(e.Run)
	return actors, e, nil
}

// leadership sets the reconciler's election, if any.
func leadership(e *leader.Elector, ro *reconciler.Options) {
	if e != nil {
		ro.Leader, ro.Replica = e.Leader, e.Holder()
	}
}

// actorFunc is a Run function as an actor.
type actorFunc func(ctx context.Context) error

func (f actorFunc) Run(ctx context.Context) error { return f(ctx) }
