// Package sqlitestore opens the Placement store on an SQLite file: the
// rules of package ledger over the backend of package store/sqlite. It is
// the one place that knows both, so that the process (cmd/placement-syncd)
// and the tests that need a whole store compose them the same way; the
// backend itself knows no rule and the ledger no backend.
package sqlitestore

import (
	"context"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// Open opens (creating if needed) the database at path, checking or
// migrating its schema as backend says, and returns the ledger over it:
// every record loaded, missing standard traits and resource classes
// inserted. Closing the ledger closes the database. Schema errors match
// store.ErrSchemaTooNew and store.ErrSchemaTooOld.
func Open(ctx context.Context, path string, backend sqlite.Options, rules ledger.Options) (*ledger.Ledger, error) {
	be, err := sqlite.Open(ctx, path, backend)
	if err != nil {
		return nil, err
	}
	l, err := ledger.New(ctx, be, rules)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return l, nil
}
