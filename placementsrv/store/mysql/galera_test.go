package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/placementsrv/storetest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// TestGalera runs the store on a real 3-node Galera cluster (Debian's
// galera-4) on loopback, started once for its subtests and only when
// this test runs.
func TestGalera(t *testing.T) {
	start := time.Now()
	c := mariadbtest.StartGalera(t, 3)
	t.Logf("3-node cluster Synced in %s", time.Since(start).Round(time.Millisecond))
	t.Run("migrate on every node at once", func(t *testing.T) { testGaleraMigrate(t, c) })
	t.Run("certification failure is ErrRetry", func(t *testing.T) { testGaleraCertification(t, c) })
	t.Run("contract on node 1", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Storage {
			db := c.NewDatabase(t)
			return func(t *testing.T) store.Backend { return galeraOpen(t, c.Nodes[0], db) }
		})
	})
	t.Run("claims through a replica per node", func(t *testing.T) { testGaleraClaims(t, c) })
}

// galeraConfig is node's configuration of db with causal reads
// (wsrep_sync_wait=1): a read on one node waits for what other nodes
// committed before it, as a replica polling the feed after another's
// write expects.
func galeraConfig(node *mariadbtest.Server, db string) *drv.Config {
	cfg := node.Config(db)
	cfg.Params = map[string]string{"wsrep_sync_wait": "1"}
	return cfg
}

func galeraOpen(t testing.TB, node *mariadbtest.Server, db string) *mysql.Backend {
	t.Helper()
	be, err := mysql.Open(context.Background(), galeraConfig(node, db), mysql.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open %s on %s: %v", db, node.Addr, err)
	}
	return be
}

// testGaleraMigrate opens an empty database on the three nodes at once:
// each migrates (Galera refuses or does not replicate GET_LOCK, so they
// run unlocked), and every node ends at the binary's schema version.
func testGaleraMigrate(t *testing.T, c *mariadbtest.Cluster) {
	db := c.NewDatabase(t)
	errs := make(chan error, len(c.Nodes))
	for _, node := range c.Nodes {
		go func() {
			be, err := mysql.Open(context.Background(), galeraConfig(node, db), mysql.Options{Migrate: true})
			if err == nil {
				err = be.Close()
			}
			errs <- err
		}()
	}
	for range c.Nodes {
		if err := <-errs; err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	for _, node := range c.Nodes {
		cur, latest, err := mysql.SchemaVersion(context.Background(), galeraConfig(node, db))
		if err != nil || cur != latest || latest != mysql.LatestSchemaVersion() {
			t.Fatalf("%s: schema version %d of %d (%v), want %d", node.Addr, cur, latest, err, mysql.LatestSchemaVersion())
		}
	}
}

// testGaleraCertification bumps one provider's generation in two
// transactions on nodes 2 and 3: each runs locally, the first COMMIT is
// certified, the second fails certification with an error matching
// store.ErrRetry, and the generation moved once.
func testGaleraCertification(t *testing.T, c *mariadbtest.Cluster) {
	ctx := context.Background()
	db := c.NewDatabase(t)
	bes := make([]*mysql.Backend, len(c.Nodes))
	for i, node := range c.Nodes {
		bes[i] = galeraOpen(t, node, db)
		defer bes[i].Close()
	}
	l, err := ledger.New(ctx, bes[0], ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.CreateProvider(ctx, store.NewProvider{UUID: rpA, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	p := loadProvider(t, bes[1])
	now := time.Now()
	tx1, err := bes[1].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback() //nolint:errcheck
	tx2, err := bes[2].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback() //nolint:errcheck
	if err := tx1.BumpProviderGeneration(ctx, p.ID, p.Generation, now); err != nil {
		t.Fatalf("bump on node 2: %v", err)
	}
	if err := tx2.BumpProviderGeneration(ctx, p.ID, p.Generation, now); err != nil {
		t.Fatalf("bump on node 3 (no lock across nodes before commit): %v", err)
	}
	if err := tx1.Commit(); err != nil {
		t.Fatalf("first commit, on node 2: %v", err)
	}
	err = tx2.Commit()
	var me *drv.MySQLError
	if !errors.Is(err, store.ErrRetry) || !errors.As(err, &me) || me.Number != 1213 {
		t.Fatalf("second commit, on node 3: %v, want certification failure (1213) matching store.ErrRetry", err)
	}
	if got := loadProvider(t, bes[0]); got.Generation != p.Generation+1 {
		t.Fatalf("generation %d on node 1, want %d", got.Generation, p.Generation+1)
	}
}

func loadProvider(t *testing.T, be *mysql.Backend) store.ProviderRow {
	t.Helper()
	recs, err := be.Load(context.Background())
	if err != nil || len(recs.Providers) != 1 {
		t.Fatalf("load: %v, %d providers, want 1", err, len(recs.Providers))
	}
	return recs.Providers[0]
}

// testGaleraClaims has 16 writers claim through three replicas, one per
// node, against a capacity of 50. A claim that keeps losing the race for
// the provider's generation to other nodes' claims, past the replica's own
// retries, is answered 409 (a conflict, as Placement answers it) and its
// client tries again, as Nova's scheduler does. Exactly 50 claims are granted, the rest refused for capacity, and
// every replica and the database count a usage of 50.
func testGaleraClaims(t *testing.T, c *mariadbtest.Cluster) {
	ctx := context.Background()
	db := c.NewDatabase(t)
	ls := make([]*ledger.Ledger, len(c.Nodes))
	for i, node := range c.Nodes {
		l, err := ledger.New(ctx, galeraOpen(t, node, db), ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls[i] = l
	}
	const capacity, writers, perWriter = 50, 16, 5
	if _, err := ls[0].CreateProvider(ctx, store.NewProvider{UUID: rpA, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ls[0].SetInventories(ctx, rpA, 0, []store.Inventory{{ResourceClass: "VCPU",
		InventoryAmounts: store.InventoryAmounts{Total: capacity, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}}); err != nil {
		t.Fatal(err)
	}
	var granted, refused, conflicts atomic.Int64
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			var err error
			for k := range perWriter {
				if err = galeraClaim(ctx, ls[(w+k)%len(ls)], fmt.Sprintf("cccccccc-0000-4000-8000-%06d%06d", w, k), &conflicts); err == nil {
					granted.Add(1)
				} else if errors.Is(err, store.ErrCapacityExceeded) {
					refused.Add(1)
					err = nil
				} else {
					break
				}
			}
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatalf("claim: %v", err)
		}
	}
	t.Logf("granted %d, refused %d, 409 conflicts retried %d", granted.Load(), refused.Load(), conflicts.Load())
	if granted.Load() != capacity || refused.Load() != writers*perWriter-capacity {
		t.Fatalf("granted %d, refused %d; want %d and %d", granted.Load(), refused.Load(), capacity, writers*perWriter-capacity)
	}
	for i, l := range ls {
		if err := l.Poll(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		p, usages, err := l.ProviderUsages(ctx, rpA)
		if err != nil || usages["VCPU"] != capacity || p.Generation != 1+capacity {
			t.Fatalf("replica on node %d: usage %v generation %d (%v), want %d and %d", i+1, usages, p.Generation, err, capacity, 1+capacity)
		}
	}
	checkDatabaseUsage(t, c.Nodes[2], db, capacity)
}

// galeraClaim claims one VCPU for consumer, again after each conflict.
func galeraClaim(ctx context.Context, l *ledger.Ledger, consumer string, conflicts *atomic.Int64) error {
	for range 100 {
		err := l.ReplaceAllocations(ctx, []store.ConsumerAllocations{{ConsumerUUID: consumer, ProjectID: "p", UserID: "u",
			ConsumerType: "INSTANCE", CheckGeneration: true,
			Allocations: []store.Allocation{{ProviderUUID: rpA, ResourceClass: "VCPU", Used: 1}}}})
		if !errors.Is(err, store.ErrConcurrentUpdate) {
			return err
		}
		conflicts.Add(1)
	}
	return fmt.Errorf("claim for %s: 100 conflicts in a row", consumer)
}

// checkDatabaseUsage sums the allocations that node holds in db.
func checkDatabaseUsage(t *testing.T, node *mariadbtest.Server, db string, want int64) {
	t.Helper()
	conn, err := sql.Open("mysql", galeraConfig(node, db).FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var used int64
	if err := conn.QueryRow("SELECT COALESCE(SUM(used), 0) FROM allocations").Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != want {
		t.Fatalf("allocations on %s sum to %d, want %d", node.Addr, used, want)
	}
}
