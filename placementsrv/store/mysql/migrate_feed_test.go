package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestMigrateFeedIDs: a database whose feed a counter row numbered
// (schema 2: changes 1 to 4 pruned, 5 to 9 kept) gets its marks from the
// counter and the first change kept, and new changes follow the last id.
func TestMigrateFeedIDs(t *testing.T) {
	ctx := context.Background()
	name := server.NewDatabase(t)
	open(t, server, name).Close()
	// Back to schema 2 as an older binary left it.
	stmts := []string{
		"ALTER TABLE changes MODIFY id BIGINT NOT NULL",
		"DELETE FROM feed_counter",
		"INSERT INTO feed_counter (name, value) VALUES ('changes', 9)",
		"DELETE FROM schema_migrations WHERE version >= 3",
	}
	for id := 5; id <= 9; id++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO changes (id, committed_at, payload) VALUES (%d, 0, 'x')", id))
	}
	if err := server.Exec(ctx, name, stmts...); err != nil {
		t.Fatal(err)
	}
	be := open(t, server, name)
	defer be.Close()
	db, err := sql.Open("mysql", server.DSN(name))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	marks := map[string]int64{}
	rows, err := db.Query("SELECT name, value FROM feed_counter")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		var v int64
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		marks[n] = v
	}
	rows.Close()
	if len(marks) != 2 || marks["settled"] != 9 || marks["pruned"] != 4 {
		t.Fatalf("marks after migrating: %v, want settled 9 and pruned 4 only", marks)
	}
	tx, err := be.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := tx.(store.FeedTx).AppendChange(ctx, []byte("y"))
	if err != nil || id != 10 {
		t.Fatalf("first change after migrating: id %d (%v), want 10", id, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_, pos, err := be.LoadAt(ctx)
	if err != nil || pos.Settled != 9 || len(pos.Seen) != 1 || pos.Seen[0] != 10 {
		t.Fatalf("position after migrating: %+v (%v), want settled 9 and seen [10]", pos, err)
	}
}

// TestSessionsReadCommitted: every connection of the pool runs READ
// COMMITTED, so writers lock no gaps.
func TestSessionsReadCommitted(t *testing.T) {
	be := open(t, server, server.NewDatabase(t))
	defer be.Close()
	var level string
	if err := be.DB().QueryRow(`SELECT @@tx_isolation`).Scan(&level); err != nil || level != "READ-COMMITTED" {
		t.Fatalf("session isolation %q (%v), want READ-COMMITTED", level, err)
	}
}
