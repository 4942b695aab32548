package sqlrows

import (
	"context"
	"database/sql"
	"io/fs"
	"sort"
)

// Scripts lists a backend's migration scripts (migrations/*.sql in fsys)
// in the order they apply; a database's schema version is how many it
// has applied.
func Scripts(fsys fs.FS) []string {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	sort.Strings(names)
	return names
}

// rowQuerier is a *sql.DB or a *sql.Conn.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// AppliedVersion reads how many migrations a database has applied:
// hasTable counts its schema_migrations tables (0 or 1), and a database
// without one is version 0.
func AppliedVersion(ctx context.Context, db rowQuerier, hasTable string) (int, error) {
	var n int
	if err := db.QueryRowContext(ctx, hasTable).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}
