package upstream

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Read checks the revision and reads every row of a Placement database
// at any known head, in one read-only transaction (REPEATABLE READ on
// MySQL), so the rows are one consistent snapshot even if Placement still
// runs; it returns the head too. The heads differ in indexes only, so the
// rows are read alike. Rows keep Placement's ids and come in id order; an
// allocation's ConsumerID is the id of the consumer row with its uuid.
// Read never writes.
func Read(ctx context.Context, db *sql.DB, d Dialect) (*store.Records, Head, error) {
	opts := &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
	if d == SQLite {
		opts = nil // the connection itself is read-only; the driver knows no levels
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return nil, Head{}, fmt.Errorf("begin read transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	head, err := checkRevision(ctx, tx)
	if err != nil {
		return nil, Head{}, err
	}
	r := &reader{ctx: ctx, q: tx}
	recs := &store.Records{}
	recs.ResourceClasses = readRows(r, "resource_classes", `SELECT id, name, created_at, updated_at FROM resource_classes ORDER BY id`, scanClass)
	recs.Traits = readRows(r, "traits", `SELECT id, name, created_at, updated_at FROM traits ORDER BY id`, scanTrait)
	recs.Providers = readRows(r, "resource_providers", `SELECT id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at FROM resource_providers ORDER BY id`, scanProvider)
	recs.Inventories = readRows(r, "inventories", `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at FROM inventories ORDER BY id`, scanInventory)
	recs.ProviderTraits = readRows(r, "resource_provider_traits", `SELECT resource_provider_id, trait_id FROM resource_provider_traits ORDER BY resource_provider_id, trait_id`, scanProviderTrait)
	recs.Aggregates = readRows(r, "placement_aggregates", `SELECT id, uuid FROM placement_aggregates ORDER BY id`, scanAggregate)
	recs.ProviderAggregates = readRows(r, "resource_provider_aggregates", `SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates ORDER BY resource_provider_id, aggregate_id`, scanProviderAggregate)
	recs.Projects = readRows(r, "projects", `SELECT id, external_id FROM projects ORDER BY id`, scanExternal)
	recs.Users = readRows(r, "users", `SELECT id, external_id FROM users ORDER BY id`, scanExternal)
	recs.ConsumerTypes = readRows(r, "consumer_types", `SELECT id, name, created_at FROM consumer_types ORDER BY id`, scanConsumerType)
	recs.Consumers = readRows(r, "consumers", `SELECT id, uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at FROM consumers ORDER BY id`, scanConsumer)
	allocs := readRows(r, "allocations", `SELECT id, resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at FROM allocations ORDER BY id`, scanAllocation)
	if r.err != nil {
		return nil, Head{}, r.err
	}
	if recs.Allocations, err = linkConsumers(recs.Consumers, allocs); err != nil {
		return nil, Head{}, err
	}
	return recs, head, nil
}

// reader runs queries until the first error, which it keeps.
type reader struct {
	ctx context.Context
	q   querier
	err error
}

func readRows[T any](r *reader, table, query string, scan func(*sql.Rows, *T) error) []T {
	if r.err != nil {
		return nil
	}
	rows, err := r.q.QueryContext(r.ctx, query)
	if err != nil {
		r.err = fmt.Errorf("read %s: %w", table, err)
		return nil
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var x T
		if err := scan(rows, &x); err != nil {
			r.err = fmt.Errorf("read %s: row %d: %w", table, len(out)+1, err)
			return nil
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		r.err = fmt.Errorf("read %s: %w", table, err)
	}
	return out
}

// upstreamAllocation is an allocation row as Placement stores it: the
// consumer by uuid.
type upstreamAllocation struct {
	row      store.AllocationRow
	consumer string
}

// linkConsumers resolves each allocation's consumer uuid to the consumer
// row's id. At either head every allocation has a consumer row (revision
// b5c396305c25 refuses to upgrade otherwise), so a missing one is an
// inconsistent database.
func linkConsumers(consumers []store.ConsumerRow, allocs []upstreamAllocation) ([]store.AllocationRow, error) {
	byUUID := make(map[string]int64, len(consumers))
	for _, c := range consumers {
		byUUID[c.UUID] = c.ID
	}
	out := make([]store.AllocationRow, 0, len(allocs))
	for _, a := range allocs {
		id, ok := byUUID[a.consumer]
		if !ok {
			return nil, fmt.Errorf("allocation %d: consumer %s has no row in consumers (an inconsistent database: run Placement's 'placement-manage db online_data_migrations')", a.row.ID, a.consumer)
		}
		a.row.ConsumerID = id
		out = append(out, a.row)
	}
	return out, nil
}

// times parses a row's created_at and updated_at.
func times(created, updated sql.NullString) (c, u time.Time, err error) {
	if c, err = parseTime(created); err != nil {
		return c, u, fmt.Errorf("created_at: %w", err)
	}
	if u, err = parseTime(updated); err != nil {
		return c, u, fmt.Errorf("updated_at: %w", err)
	}
	return c, u, nil
}
