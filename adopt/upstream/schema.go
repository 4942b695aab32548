// Package upstream reads and writes OpenStack Placement's own database:
// its tables at one of the alembic heads it knows (Placement 8.0.0's and
// 15.0.0's), as rows of package store. It knows that schema's SQL (SQLite
// and MySQL dialects) and nothing of ours; 'db import' hands what Read
// returns to package adopt/transfer, and 'db export' hands our rows to
// Write.
package upstream

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// The alembic heads Read and Write speak.
const (
	// Rev8 is Placement 8.0.0's newest migration (the consumer_types
	// table).
	Rev8 = "422ece571366"
	// Rev15 is the one migration added after 8.0.0 and 15.0.0's newest:
	// it drops five indexes that duplicated unique constraints. Rows and
	// columns are as at Rev8.
	Rev15 = "a082b8bb98d0"
)

// Head is an alembic head: the revision alembic_version holds once an
// upstream release's 'placement-manage db sync' has run.
type Head struct {
	Revision string
	// Release is the upstream release whose head it is.
	Release release.Release
}

func (h Head) String() string { return h.Revision + " (" + h.Release.String() + ")" }

// Heads lists the known heads, oldest first.
func Heads() []Head {
	return []Head{{Revision: Rev8, Release: release.V8}, {Revision: Rev15, Release: release.V15}}
}

// HeadOf is the head release r's 'db sync' leaves.
func HeadOf(r release.Release) Head {
	for _, h := range Heads() {
		if h.Release == r {
			return h
		}
	}
	return Head{Revision: Rev15, Release: release.V15}
}

// droppedIndex reports whether h's migrations dropped the index named
// name, one the 8.0.0 schema has.
func (h Head) droppedIndex(name string) bool {
	if h.Revision != Rev15 {
		return false
	}
	switch name {
	case "inventories_resource_provider_id_idx", "inventories_resource_provider_resource_class_idx",
		"ix_placement_aggregates_uuid", "resource_providers_name_idx", "resource_providers_uuid_idx":
		return true
	}
	return false
}

// olderRevision reports a revision before 8.0.0's head in the same
// migration chain, to tell an operator which way to go.
func olderRevision(rev string) bool {
	switch rev {
	case "b4ed3a175331", "611cd6dffd7b", "b5c396305c25":
		return true
	}
	return false
}

// Dialect is the SQL dialect of a database.
type Dialect int

// The dialects Placement's database may use.
const (
	SQLite Dialect = iota
	MySQL
)

// ErrRevision reports a database that is at none of the known heads (or
// not Placement's at all).
var ErrRevision = errors.New("not an OpenStack Placement database at a known alembic head")

// tables are Placement's tables at every known head, in an order in
// which each table's references come before it.
func tables() []string {
	return []string{"resource_classes", "traits", "resource_providers", "inventories",
		"resource_provider_traits", "placement_aggregates", "resource_provider_aggregates",
		"projects", "users", "consumer_types", "consumers", "allocations"}
}

// querier is what Read and checkRevision need of a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkRevision returns the database's head, or fails with ErrRevision
// unless alembic_version holds exactly one known head.
func checkRevision(ctx context.Context, q querier) (Head, error) {
	revs, err := readRevisions(ctx, q)
	if err != nil {
		return Head{}, err
	}
	if h, ok := knownHead(revs); ok {
		return h, nil
	}
	return Head{}, revisionError(revs)
}

// readRevisions reads alembic_version's rows; a database without the
// table fails with ErrRevision.
func readRevisions(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT version_num FROM alembic_version`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "doesn't exist") {
			return nil, fmt.Errorf("%w: it has no alembic_version table", ErrRevision)
		}
		return nil, fmt.Errorf("read alembic_version: %w", err)
	}
	defer rows.Close()
	var revs []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read alembic_version: %w", err)
		}
		revs = append(revs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read alembic_version: %w", err)
	}
	return revs, nil
}

// knownHead is the head revs names when it is exactly one known head.
func knownHead(revs []string) (Head, bool) {
	if len(revs) == 1 {
		for _, h := range Heads() {
			if revs[0] == h.Revision {
				return h, true
			}
		}
	}
	return Head{}, false
}

// revisionError explains a revision that is none of the known heads.
func revisionError(revs []string) error {
	var known []string
	for _, h := range Heads() {
		known = append(known, h.String())
	}
	switch {
	case len(revs) == 0:
		return fmt.Errorf("%w: alembic_version is empty (a database whose migrations never ran)", ErrRevision)
	case len(revs) > 1:
		sort.Strings(revs)
		return fmt.Errorf("%w: alembic_version holds %d revisions (%s), a branched history no Placement release makes; the heads this binary reads are %s",
			ErrRevision, len(revs), strings.Join(revs, ", "), strings.Join(known, ", "))
	case len(revs) == 1 && olderRevision(revs[0]):
		return fmt.Errorf("%w: it is at alembic revision %s, older than the heads this binary reads (%s): "+
			"run 'placement-manage db sync' of the Placement release that serves it (8.0.0 or newer) first",
			ErrRevision, revs[0], strings.Join(known, ", "))
	}
	return fmt.Errorf("%w: it is at alembic revision %s, which is none of the heads this binary reads (%s): "+
		"a newer or unknown Placement; import from a release whose head is listed",
		ErrRevision, revs[0], strings.Join(known, ", "))
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
