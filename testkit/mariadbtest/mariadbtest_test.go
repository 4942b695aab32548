package mariadbtest

import (
	"context"
	"database/sql"
	"testing"
)

// TestServer starts a real MariaDB, writes through a database of its own,
// survives a crash and a restart on the same address, and keeps databases
// of two tests apart.
func TestServer(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	a, b := s.NewDatabase(t), s.NewDatabase(t)
	if a == b {
		t.Fatalf("NewDatabase returned %q twice", a)
	}
	if err := s.Exec(ctx, a, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO t VALUES (1, 'é')"); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, a, "SELECT 1"); err == nil {
		t.Fatal("Exec after Kill succeeded")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", s.DSN(a))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got, charset string
	if err := db.QueryRowContext(ctx, "SELECT s FROM t WHERE id = 1").Scan(&got); err != nil {
		t.Fatalf("committed row after kill -9 and restart: %v", err)
	}
	if got != "é" {
		t.Errorf("row = %q, want %q", got, "é")
	}
	if err := db.QueryRowContext(ctx, "SELECT @@character_set_server").Scan(&charset); err != nil {
		t.Fatal(err)
	}
	if charset != "utf8mb4" {
		t.Errorf("character_set_server = %q, want utf8mb4", charset)
	}
	if err := s.Exec(ctx, b, "SELECT * FROM t"); err == nil {
		t.Errorf("database %s sees %s's table", b, a)
	}
}
