package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestWriteSessions: a write transaction on the writers' pool (autocommit
// off, no START TRANSACTION) is invisible to others until COMMIT, undone
// by ROLLBACK, and one abandoned by its context leaves nothing behind for
// the next writer that gets a connection; a second end is sql.ErrTxDone.
func TestWriteSessions(t *testing.T) {
	ctx := context.Background()
	db := server.NewDatabase(t)
	be := open(t, server, db)
	defer be.Close()
	now := time.Now().UTC()
	count := func(name string) int {
		t.Helper()
		var n int
		if err := be.DB().QueryRow(`SELECT COUNT(*) FROM traits WHERE name = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func(ctx context.Context, name string) store.Tx {
		t.Helper()
		tx, err := be.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.InsertTrait(ctx, store.TraitRow{Name: name, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		return tx
	}

	// The other pool (reads, leases, tombstones) commits each statement.
	var autocommit int
	if err := be.DB().QueryRow(`SELECT @@autocommit`).Scan(&autocommit); err != nil || autocommit != 1 {
		t.Fatalf("the shared pool's autocommit is %d (%v), want 1", autocommit, err)
	}
	tx := insert(ctx, "CUSTOM_COMMITTED")
	if count("CUSTOM_COMMITTED") != 0 {
		t.Fatal("an uncommitted insert is visible to another connection")
	}
	if err := tx.Commit(); err != nil || count("CUSTOM_COMMITTED") != 1 {
		t.Fatalf("commit: %v; the insert is not visible after it", err)
	}
	if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("rollback after commit: %v, want sql.ErrTxDone", err)
	}

	tx = insert(ctx, "CUSTOM_ROLLED_BACK")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithCancel(ctx)
	tx = insert(cctx, "CUSTOM_ABANDONED")
	cancel()
	if err := tx.Commit(); err == nil {
		t.Fatal("a commit after its context ended succeeded")
	}
	// Every connection of the writers' pool, old and new, starts clean:
	// a commit of later writes commits nothing left by the others.
	for i := range 20 {
		if err := insert(ctx, fmt.Sprintf("CUSTOM_LATER_%d", i)).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]int{"CUSTOM_ROLLED_BACK": 0, "CUSTOM_ABANDONED": 0, "CUSTOM_LATER_19": 1} {
		if got := count(name); got != want {
			t.Errorf("%s: %d rows, want %d", name, got, want)
		}
	}
}

// TestCommitChange: the change's insert and COMMIT in one batch commit
// the transaction's writes and return the change's id; when the insert
// fails the server stops the batch before COMMIT, and nothing of the
// transaction is committed.
func TestCommitChange(t *testing.T) {
	ctx := context.Background()
	db := server.NewDatabase(t)
	be := open(t, server, db)
	defer be.Close()
	now := time.Now().UTC()
	write := func(name string, payload []byte) (int64, error) {
		t.Helper()
		tx, err := be.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // over after a commit
		if _, err := tx.InsertTrait(ctx, store.TraitRow{Name: name, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		return tx.(store.FeedTx).CommitChange(ctx, payload)
	}
	id, err := write("CUSTOM_ONE", []byte("one"))
	if err != nil || id <= 0 {
		t.Fatalf("CommitChange: id %d, %v", id, err)
	}
	var payload string
	if err := be.DB().QueryRow(`SELECT payload FROM changes WHERE id = ?`, id).Scan(&payload); err != nil || payload != "one" {
		t.Fatalf("change %d: %q (%v)", id, payload, err)
	}
	// A NULL payload fails the insert (the column is NOT NULL).
	if _, err := write("CUSTOM_TWO", nil); err == nil {
		t.Fatal("a change that cannot be inserted committed")
	}
	var n int
	if err := be.DB().QueryRow(`SELECT COUNT(*) FROM traits WHERE name IN ('CUSTOM_ONE', 'CUSTOM_TWO')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d of the two traits committed (%v), want CUSTOM_ONE only", n, err)
	}
	// The writers' pool goes on with clean connections.
	if id2, err := write("CUSTOM_THREE", []byte("three")); err != nil || id2 <= id {
		t.Fatalf("after a failed batch: id %d, %v", id2, err)
	}
}
