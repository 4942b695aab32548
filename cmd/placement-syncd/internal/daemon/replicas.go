package daemon

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/leader"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
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

// replicas is what a store shared with other replicas adds to the
// process: the actors that follow the change feed and elect the
// reconciler's leader, and the assemble.Leadership the reconciler runs under. A
// store of its own (SQLite) adds no actor and no election: this process
// runs the jobs.
type replicas struct {
	actors map[string]actor
	lead   assemble.Leadership
}

// newReplicas follows the change feed of a shared store and, when the
// reconciler runs, elects its leader.
func newReplicas(cfg config.Config, st *ledger.Ledger, log *zap.Logger, reg prometheus.Registerer) (replicas, error) {
	r := replicas{actors: map[string]actor{}}
	if db, ok := st.Shared().(sharedRecordStore); ok {
		r.lead.Shared = sharedRecords{db: db, kind: "reconciler.services"}
	}
	if !st.Replicated() {
		return r, nil
	}
	st.SetConsistentReads(cfg.Database.ChangeFeed.ConsistentReads)
	flog := log.Named("feed")
	r.actors["change-feed"] = followActor{st: st, opts: ledger.FollowOptions{
		Interval:  cfg.Database.ChangeFeed.PollInterval,
		Retention: cfg.Database.ChangeFeed.Retention,
		OnError:   func(err error) { flog.Warn("change feed", zap.Error(err)) },
	}}
	leases, ok := st.Shared().(store.Leases)
	if !cfg.Reconciler.Enabled || !ok {
		return r, nil
	}
	set := metrics.NewSet("reconciler")
	gauge := set.Gauge("leader", "1 while this replica holds the reconciler's lease and runs its jobs, 0 on a standby.")
	if err := set.Register(reg); err != nil {
		return r, err
	}
	e := leader.New(leases, leader.Options{Name: leaseName, Holder: replicaName(), TTL: cfg.Reconciler.Leader.LeaseTTL,
		Gauge: gauge, Logger: log.Named("leader")})
	r.actors["leader"] = actorFunc(e.Run)
	r.lead.Leader, r.lead.Replica = e.Leader, e.Holder()
	return r, nil
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
