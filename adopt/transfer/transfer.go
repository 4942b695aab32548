// Package transfer copies a whole Placement state (store.Records, as
// package adopt/upstream reads them from OpenStack Placement's database)
// into a store.Backend in one transaction, for 'db import'. It writes
// through the backend contract only, so it fills any backend the same way,
// and a failure leaves the target as it was.
package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// ErrNotEmpty reports a target that holds data of its own.
var ErrNotEmpty = errors.New("target database is not empty")

// Options configures Import.
type Options struct {
	// Replace discards what the target holds instead of refusing it.
	Replace bool
	// Progress, when set, is told each table's row count once its rows are
	// written (before the commit).
	Progress func(table string, rows int)
	// Now stands in for timestamps the source lacks (NULL created_at);
	// nil means time.Now.
	Now func() time.Time
}

// Count is how many rows of one table were copied.
type Count struct {
	Table string
	Rows  int
}

// Import copies src into be in one transaction and returns the row count
// of each table, in the order written. The target must be empty — no rows
// but the standard traits and resource classes every start inserts —
// unless opts.Replace. Either way those standard rows are replaced by
// src's, so that traits keep the source's ids and therefore its order.
func Import(ctx context.Context, be store.Backend, src *store.Records, opts Options) ([]Count, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cur, err := be.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("read target: %w", err)
	}
	if what := occupied(cur); what != "" && !opts.Replace {
		return nil, fmt.Errorf("%w: it holds %s; import into a new database, or give --replace to discard its contents", ErrNotEmpty, what)
	}
	tx, err := be.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	keep, err := clearTarget(ctx, tx, cur)
	if err != nil {
		return nil, fmt.Errorf("clear target: %w", err)
	}
	c := &copier{ctx: ctx, tx: tx, src: src, keep: keep, now: opts.Now().UTC(), progress: opts.Progress}
	if err := c.run(); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return c.counts, nil
}

// occupied describes what of cur makes it more than a freshly started
// database, or returns "".
func occupied(cur *store.Records) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(len(cur.Providers), "resource providers")
	add(len(cur.Consumers), "consumers")
	add(len(cur.Allocations), "allocations")
	add(len(cur.Aggregates), "aggregates")
	add(len(cur.Projects), "projects")
	add(len(cur.Users), "users")
	add(len(cur.ConsumerTypes), "consumer types")
	custom := 0
	for _, t := range cur.Traits {
		if strings.HasPrefix(t.Name, standard.CustomPrefix) {
			custom++
		}
	}
	add(custom, "custom traits")
	custom = 0
	for _, c := range cur.ResourceClasses {
		if c.ID >= store.MinCustomResourceClassID || strings.HasPrefix(c.Name, standard.CustomPrefix) {
			custom++
		}
	}
	add(custom, "custom resource classes")
	return strings.Join(parts, ", ")
}
