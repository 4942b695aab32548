package upstream

import (
	"context"
	"database/sql"
	"strings"
)

// Identity is what a database that is OpenStack Placement's own says of
// itself, for messages that must tell an operator which database they
// named: the alembic revisions it holds and, when they are one known
// head, which release's schema it has.
type Identity struct {
	Revisions []string
	// Head is meaningful only when Known.
	Head  Head
	Known bool
}

// Identify tells whether db is OpenStack Placement's own database (see
// IsPlacement) and, if it is, at which revision; ok is false for any
// other database. An alembic_version that cannot be read is an error
// with ok true. It only reads.
func Identify(ctx context.Context, db *sql.DB, d Dialect) (id Identity, ok bool, err error) {
	own, err := IsPlacement(ctx, db, d)
	if err != nil || !own {
		return Identity{}, false, err
	}
	revs, err := readRevisions(ctx, db)
	if err != nil {
		return Identity{}, true, err
	}
	h, known := knownHead(revs)
	return Identity{Revisions: revs, Head: h, Known: known}, true, nil
}

// String says which Placement database it is: "alembic revision R,
// Placement 15.0.0's schema", or that the revision is none this binary
// knows.
func (id Identity) String() string {
	switch {
	case id.Known:
		return "alembic revision " + id.Head.Revision + ", Placement " + id.Head.Release.String() + "'s schema"
	case len(id.Revisions) == 0:
		return "no alembic revision read"
	}
	return "alembic revision " + strings.Join(id.Revisions, ", ") + ", of no release this binary knows"
}
