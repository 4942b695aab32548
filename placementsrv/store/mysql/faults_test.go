package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

const (
	rpA = "aaaaaaaa-1111-4000-8000-000000000001"
	rpB = "bbbbbbbb-1111-4000-8000-000000000002"
)

// fixture is a ledger over a fresh database of s with two providers of
// 100 VCPU each, and the registry of its metrics.
type fixture struct {
	t   *testing.T
	s   *mariadbtest.Server
	db  string
	l   *ledger.Ledger
	reg *prometheus.Registry
}

func newFixture(t *testing.T, s *mariadbtest.Server) *fixture {
	t.Helper()
	f := &fixture{t: t, s: s, db: s.NewDatabase(t), reg: prometheus.NewRegistry()}
	l, err := ledger.New(context.Background(), open(t, s, f.db), ledger.Options{Registerer: f.reg})
	if err != nil {
		t.Fatal(err)
	}
	f.l = l
	t.Cleanup(func() { f.l.Close() })
	for _, u := range []string{rpA, rpB} {
		if _, err := l.CreateProvider(context.Background(), store.NewProvider{UUID: u, Name: u}); err != nil {
			t.Fatal(err)
		}
		inv := store.Inventory{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 100, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1}}
		if _, _, err := l.SetInventories(context.Background(), u, 0, []store.Inventory{inv}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// claim allocates n VCPU of rp to a consumer numbered i.
func (f *fixture) claim(i int, rp string, n int64) error {
	return f.l.ReplaceAllocations(context.Background(), []store.ConsumerAllocations{{
		ConsumerUUID: fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i), ProjectID: "p", UserID: "u",
		Allocations: []store.Allocation{{ProviderUUID: rp, ResourceClass: "VCPU", Used: n}},
	}})
}

// used is the VCPU usage of rp as the ledger answers it.
func (f *fixture) used(l *ledger.Ledger, rp string) int64 {
	f.t.Helper()
	_, u, err := l.ProviderUsages(context.Background(), rp)
	if err != nil {
		f.t.Fatal(err)
	}
	return u["VCPU"]
}

// sqlDB is a plain connection pool to the fixture's database.
func (f *fixture) sqlDB() *sql.DB {
	f.t.Helper()
	db, err := sql.Open("mysql", f.s.DSN(f.db))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	return db
}

// waitLockWait returns once n transactions of the server wait for a lock.
func waitLockWait(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	for {
		var waiting int
		if err := db.QueryRow(`SELECT count(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}

		// InnoDB refreshes innodb_trx only when it has not been read
		// for 100 ms: a faster poll would keep reading a stale copy.
		time.Sleep(150 * time.Millisecond)
	}
}

func deadlocks(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var name string
	var n int64
	if err := db.QueryRow(`SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'`).Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeadlockIsErrRetry provokes a real deadlock between two backend
// transactions that bump two generations in opposite orders: the
// server's victim fails with an error matching store.ErrRetry (MySQL
// error 1213), and the other commits.
func TestDeadlockIsErrRetry(t *testing.T) {
	f := newFixture(t, server)
	ctx := context.Background()
	be := open(t, server, f.db)
	defer be.Close()
	recs, err := be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := recs.Providers[0], recs.Providers[1]
	now := time.Now()
	tx1, err := be.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback() //nolint:errcheck
	tx2, err := be.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback() //nolint:errcheck
	if err := tx1.BumpProviderGeneration(ctx, a.ID, a.Generation, now); err != nil {
		t.Fatal(err)
	}
	if err := tx2.BumpProviderGeneration(ctx, b.ID, b.Generation, now); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- tx1.BumpProviderGeneration(ctx, b.ID, b.Generation, now) }()
	waitLockWait(t, f.sqlDB(), 1)
	errs := []error{tx2.BumpProviderGeneration(ctx, a.ID, a.Generation, now)}
	if errs[0] != nil {
		tx2.Rollback() //nolint:errcheck // the victim's locks go, so tx1 goes on
	}
	errs = append(errs, <-first)
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("want one deadlock victim, got errors %v", errs)
	}
	var me *drv.MySQLError
	if !errors.Is(failed[0], store.ErrRetry) || !errors.As(failed[0], &me) || me.Number != 1213 {
		t.Fatalf("victim's error = %v, want MySQL 1213 matching store.ErrRetry", failed[0])
	}
}

// TestLedgerRetriesDeadlock makes a claim the victim of a real deadlock
// with another client's transaction: the ledger runs the claim again
// and it commits once, with the usage counted once.
func TestLedgerRetriesDeadlock(t *testing.T) {
	f := newFixture(t, server)
	if err := f.claim(1, rpB, 3); err != nil {
		t.Fatal(err)
	}
	db := f.sqlDB()
	before := deadlocks(t, db)
	var allocID int64
	if err := db.QueryRow(`SELECT id FROM allocations`).Scan(&allocID); err != nil {
		t.Fatal(err)
	}
	other, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback() //nolint:errcheck
	// A failure here should not hang the test for the default 50 s.
	if _, err := other.Exec(`SET SESSION innodb_lock_wait_timeout = 10`); err != nil {
		t.Fatal(err)
	}
	// Heavier than the claim's transaction, so InnoDB picks the claim
	// as the deadlock's victim; the claim does not touch these rows.
	for i := range 50 {
		if _, err := other.Exec(`INSERT INTO traits (name, created_at) VALUES (?, 0)`, fmt.Sprint("CUSTOM_OTHER_", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Exec(`UPDATE resource_providers SET updated_at = updated_at WHERE uuid = ?`, rpA); err != nil {
		t.Fatal(err)
	}
	// The claim moves consumer 1 from B to A: it deletes the consumer's
	// allocation on B, then waits for A's row to insert on A.
	done := make(chan error, 1)
	go func() { done <- f.claim(1, rpA, 7) }()
	waitLockWait(t, db, 1)
	// Now wait for the deleted allocation: a cycle; the claim is the
	// victim, and this lock is granted once it has rolled back.
	if _, err := other.Exec(`SELECT id FROM allocations WHERE id = ? FOR UPDATE`, allocID); err != nil {
		t.Fatalf("other transaction: %v", err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("claim: %v", err)
	}
	if got := deadlocks(t, db) - before; got != 1 {
		t.Errorf("Innodb_deadlocks grew by %d, want 1", got)
	}
	if got := counter(t, f.reg, "placement_syncd_store_transaction_retries_total"); got != 1 {
		t.Errorf("transaction retries = %v, want 1", got)
	}
	var n, used int64
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(used), 0) FROM allocations`).Scan(&n, &used); err != nil {
		t.Fatal(err)
	}
	if n != 1 || used != 7 || f.used(f.l, rpA) != 7 || f.used(f.l, rpB) != 0 {
		t.Errorf("stored %d allocations using %d, ledger uses %d on A, %d on B; want one of 7 on A",
			n, used, f.used(f.l, rpA), f.used(f.l, rpB))
	}
}

// counter reads the counter name from reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

// TestLedgerSurvivesRestart kills MariaDB (SIGKILL) under a ledger: the
// write during the outage fails and changes nothing, and once the server
// is back the same ledger writes again without being reopened; a reopen
// then sees every acknowledged write.
func TestLedgerSurvivesRestart(t *testing.T) {
	s := mariadbtest.Start(t) // its own server: the kill must not hit other tests
	f := newFixture(t, s)
	ctx := context.Background()
	if err := f.claim(1, rpA, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := f.claim(2, rpA, 10); err == nil {
		t.Fatal("claim succeeded while the database was down")
	}
	if got := f.used(f.l, rpA); got != 5 {
		t.Fatalf("usage after the failed claim = %d, want 5", got)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	for i, rp := range []string{rpA, rpB} {
		if err := f.claim(3+i, rp, 10); err != nil {
			t.Fatalf("claim after restart: %v", err)
		}
	}
	if a, b := f.used(f.l, rpA), f.used(f.l, rpB); a != 15 || b != 10 {
		t.Fatalf("usage after restart = %d, %d, want 15, 10", a, b)
	}
	l, err := ledger.New(ctx, open(t, s, f.db), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if a, b := f.used(l, rpA), f.used(l, rpB); a != 15 || b != 10 {
		t.Fatalf("reopened usage = %d, %d, want 15, 10", a, b)
	}
}

// lostAckBackend commits for real but reports the commit as failed, as a
// connection lost after the server committed would: a fault the ledger
// must tell apart from a conflict.
type lostAckBackend struct {
	store.Backend
	lose bool
}

func (b *lostAckBackend) Begin(ctx context.Context) (store.Tx, error) {
	tx, err := b.Backend.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &lostAckTx{Tx: tx, b: b}, nil
}

type lostAckTx struct {
	store.Tx
	b *lostAckBackend
}

func (x *lostAckTx) Commit() error {
	if err := x.Tx.Commit(); err != nil || !x.b.lose {
		return err
	}
	x.b.lose = false
	return drv.ErrInvalidConn
}

// TestLedgerReloadsAfterUnknownCommit: a claim whose commit reached the
// database but whose answer was lost fails, and the next write first
// reloads what the database holds, so it neither loses the committed
// claim nor trips over the generation it moved.
func TestLedgerReloadsAfterUnknownCommit(t *testing.T) {
	ctx := context.Background()
	db := server.NewDatabase(t)
	be := &lostAckBackend{Backend: open(t, server, db)}
	l, err := ledger.New(ctx, be, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := &fixture{t: t, s: server, db: db, l: l}
	if _, err := l.CreateProvider(ctx, store.NewProvider{UUID: rpA, Name: rpA}); err != nil {
		t.Fatal(err)
	}
	inv := store.Inventory{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 100, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1}}
	if _, _, err := l.SetInventories(ctx, rpA, 0, []store.Inventory{inv}); err != nil {
		t.Fatal(err)
	}
	be.lose = true
	if err := f.claim(1, rpA, 5); !errors.Is(err, drv.ErrInvalidConn) {
		t.Fatalf("claim with a lost commit answer: %v", err)
	}
	if err := f.claim(2, rpA, 7); err != nil {
		t.Fatalf("claim after the lost answer: %v", err)
	}
	if got := f.used(l, rpA); got != 12 {
		t.Fatalf("usage = %d, want 12 (the committed claim and the next)", got)
	}
}
