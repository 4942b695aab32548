package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migration scripts in order.
func migrations() []string { return sqlrows.Scripts(migrationFS) }

// LatestSchemaVersion is the schema version this binary writes.
func LatestSchemaVersion() int { return len(migrations()) }

// schemaVersion reads how many migrations a database has applied; a new,
// empty file is version 0.
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	return sqlrows.AppliedVersion(ctx, db, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='schema_migrations'`)
}

// applyMigrations applies each pending migration in its own transaction,
// recording it, so a failure never leaves a half-applied step.
func applyMigrations(ctx context.Context, db *sql.DB, from int, now time.Time) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	for i, name := range migrations() {
		v := i + 1
		if v <= from {
			continue
		}
		body, err := migrationFS.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback() //nolint:errcheck
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, v, name, now.UnixNano()); err != nil {
			tx.Rollback() //nolint:errcheck
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// SchemaVersion opens path read-only and reports its schema version and
// the binary's, for 'db version'.
func SchemaVersion(ctx context.Context, path string) (current, latest int, err error) {
	db, err := sql.Open("sqlite3", fileURI(path)+"?mode=ro")
	if err != nil {
		return 0, 0, fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	current, err = schemaVersion(ctx, db)
	if err != nil {
		return 0, 0, fmt.Errorf("read schema version of %s: %w", path, err)
	}
	return current, LatestSchemaVersion(), nil
}
