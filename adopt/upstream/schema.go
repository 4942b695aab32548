// Package upstream reads and writes OpenStack Placement 8.0.0's own
// database: its tables at alembic revision Head, as rows of package store.
// It knows that schema's SQL (SQLite and MySQL dialects) and nothing of
// ours; 'db import' hands what Read returns to package adopt/transfer,
// and 'db export' hands our rows to Write.
package upstream

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Head is the alembic revision of Placement 8.0.0's newest migration
// (the consumer_types table); Read and Write speak that schema only.
const Head = "422ece571366"

// knownOlder are the earlier revisions of the same migration chain, to
// tell an operator which way to go.
var knownOlder = map[string]bool{"b4ed3a175331": true, "611cd6dffd7b": true, "b5c396305c25": true}

// Dialect is the SQL dialect of a database.
type Dialect int

// The dialects Placement's database may use.
const (
	SQLite Dialect = iota
	MySQL
)

// ErrRevision reports a database that is not at Head (or not
// Placement's at all).
var ErrRevision = errors.New("not an OpenStack Placement 8.0.0 database")

// tables are Placement's tables at Head, in an order in which each
// table's references come before it.
var tables = []string{"resource_classes", "traits", "resource_providers", "inventories",
	"resource_provider_traits", "placement_aggregates", "resource_provider_aggregates",
	"projects", "users", "consumer_types", "consumers", "allocations"}

// querier is what Read and checkRevision need of a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkRevision fails with ErrRevision unless the database's
// alembic_version holds exactly Head.
func checkRevision(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT version_num FROM alembic_version`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "doesn't exist") {
			return fmt.Errorf("%w: it has no alembic_version table", ErrRevision)
		}
		return fmt.Errorf("read alembic_version: %w", err)
	}
	defer rows.Close()
	var revs []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("read alembic_version: %w", err)
		}
		revs = append(revs, v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read alembic_version: %w", err)
	}
	switch {
	case len(revs) == 1 && revs[0] == Head:
		return nil
	case len(revs) == 0:
		return fmt.Errorf("%w: alembic_version is empty (a database whose migrations never ran)", ErrRevision)
	case len(revs) == 1 && knownOlder[revs[0]]:
		return fmt.Errorf("%w: it is at alembic revision %s, older than 8.0.0's %s: run Placement 8.0.0's 'placement-manage db sync' on it first", ErrRevision, revs[0], Head)
	}
	return fmt.Errorf("%w: it is at alembic revision %s, which is not 8.0.0's %s (a newer or unknown Placement): "+
		"export it with the Placement release that wrote it, or import from 8.0.0", ErrRevision, strings.Join(revs, ", "), Head)
}

// IsPlacement reports whether db is OpenStack Placement's own database:
// one with alembic_version, the table its migrations keep.
func IsPlacement(ctx context.Context, db *sql.DB, d Dialect) (bool, error) {
	q := `SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'alembic_version'`
	if d == SQLite {
		q = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'`
	}
	var n int
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	return n > 0, nil
}
