package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Load reads every table, rows with an id in id order, in one read-only
// transaction: REPEATABLE READ gives all its reads one snapshot, so a
// write committed meanwhile (by another process) is seen whole or not at
// all.
func (b *Backend) Load(ctx context.Context) (*store.Records, error) {
	t, err := b.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.name, err)
	}
	defer t.Rollback() //nolint:errcheck // read-only
	r, err := loadAll(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.name, err)
	}
	if err := t.Commit(); err != nil {
		return nil, fmt.Errorf("load %s: %w", b.name, err)
	}
	return r, nil
}

func loadAll(ctx context.Context, db *sql.Tx) (*store.Records, error) {
	r := &store.Records{}
	var err error
	if r.ResourceClasses, err = queryRows(ctx, db, loadClasses, scanClass); err != nil {
		return nil, err
	}
	if r.Traits, err = queryRows(ctx, db, loadTraits, scanTrait); err != nil {
		return nil, err
	}
	if r.Providers, err = queryRows(ctx, db, loadProviders, scanProvider); err != nil {
		return nil, err
	}
	if r.Inventories, err = queryRows(ctx, db, loadInventories, scanInventory); err != nil {
		return nil, err
	}
	if r.ProviderTraits, err = queryRows(ctx, db, loadProviderTraits, scanProviderTrait); err != nil {
		return nil, err
	}
	if r.Aggregates, err = queryRows(ctx, db, loadAggregates, scanAggregate); err != nil {
		return nil, err
	}
	if r.ProviderAggregates, err = queryRows(ctx, db, loadProviderAggregates, scanProviderAggregate); err != nil {
		return nil, err
	}
	if r.Projects, err = queryRows(ctx, db, loadProjects, scanExternalID); err != nil {
		return nil, err
	}
	if r.Users, err = queryRows(ctx, db, loadUsers, scanExternalID); err != nil {
		return nil, err
	}
	if r.ConsumerTypes, err = queryRows(ctx, db, loadConsumerTypes, scanConsumerType); err != nil {
		return nil, err
	}
	if r.Consumers, err = queryRows(ctx, db, loadConsumers, scanConsumer); err != nil {
		return nil, err
	}
	if r.Allocations, err = queryRows(ctx, db, loadAllocations, scanAllocation); err != nil {
		return nil, err
	}
	return r, nil
}

const (
	loadClasses            = `SELECT id, name, created_at, updated_at FROM resource_classes ORDER BY id`
	loadTraits             = `SELECT id, name, created_at, updated_at FROM traits ORDER BY id`
	loadProviders          = `SELECT id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at FROM resource_providers ORDER BY id`
	loadInventories        = `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at FROM inventories`
	loadProviderTraits     = `SELECT resource_provider_id, trait_id FROM resource_provider_traits`
	loadAggregates         = `SELECT id, uuid FROM placement_aggregates ORDER BY id`
	loadProviderAggregates = `SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates`
	loadProjects           = `SELECT id, external_id FROM projects ORDER BY id`
	loadUsers              = `SELECT id, external_id FROM users ORDER BY id`
	loadConsumerTypes      = `SELECT id, name, created_at FROM consumer_types ORDER BY id`
	loadConsumers          = `SELECT id, uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at FROM consumers ORDER BY id`
	loadAllocations        = `SELECT id, resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at FROM allocations ORDER BY id`
)

// queryRows runs query and scans each result row into a T.
func queryRows[T any](ctx context.Context, db *sql.Tx, query string, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var x T
		if err := scan(rows, &x); err != nil {
			return nil, fmt.Errorf("%s: %w", query, err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	return out, nil
}

// times scans created_at and updated_at after the other columns.
type times struct{ created, updated sql.NullInt64 }

// scanNamed scans an id, a name and the two timestamps.
func scanNamed(rs *sql.Rows, id *int64, name *string, created, updated *time.Time) error {
	var t times
	if err := rs.Scan(id, name, &t.created, &t.updated); err != nil {
		return err
	}
	*created, *updated = fromNanos(t.created), fromNanos(t.updated)
	return nil
}

func scanClass(rs *sql.Rows, x *store.ResourceClassRow) error {
	return scanNamed(rs, &x.ID, &x.Name, &x.CreatedAt, &x.UpdatedAt)
}

func scanTrait(rs *sql.Rows, x *store.TraitRow) error {
	return scanNamed(rs, &x.ID, &x.Name, &x.CreatedAt, &x.UpdatedAt)
}

func scanProvider(rs *sql.Rows, x *store.ProviderRow) error {
	var t times
	var parent, root sql.NullInt64
	if err := rs.Scan(&x.ID, &x.UUID, &x.Name, &x.Generation, &parent, &root, &t.created, &t.updated); err != nil {
		return err
	}
	x.ParentID, x.RootID = parent.Int64, root.Int64
	x.CreatedAt, x.UpdatedAt = fromNanos(t.created), fromNanos(t.updated)
	return nil
}

func scanInventory(rs *sql.Rows, x *store.InventoryRow) error {
	var t times
	if err := rs.Scan(&x.ProviderID, &x.ClassID, &x.Total, &x.Reserved, &x.MinUnit, &x.MaxUnit, &x.StepSize,
		&x.AllocationRatio, &t.created, &t.updated); err != nil {
		return err
	}
	x.CreatedAt, x.UpdatedAt = fromNanos(t.created), fromNanos(t.updated)
	return nil
}

func scanProviderTrait(rs *sql.Rows, x *store.ProviderTraitRow) error {
	return rs.Scan(&x.ProviderID, &x.TraitID)
}

func scanAggregate(rs *sql.Rows, x *store.AggregateRow) error {
	return rs.Scan(&x.ID, &x.UUID)
}

func scanProviderAggregate(rs *sql.Rows, x *store.ProviderAggregateRow) error {
	return rs.Scan(&x.ProviderID, &x.AggregateID)
}

func scanExternalID(rs *sql.Rows, x *store.ExternalIDRow) error {
	return rs.Scan(&x.ID, &x.ExternalID)
}

func scanConsumerType(rs *sql.Rows, x *store.ConsumerTypeRow) error {
	var created sql.NullInt64
	if err := rs.Scan(&x.ID, &x.Name, &created); err != nil {
		return err
	}
	x.CreatedAt = fromNanos(created)
	return nil
}

func scanConsumer(rs *sql.Rows, x *store.ConsumerRow) error {
	var t times
	var ctype sql.NullInt64
	if err := rs.Scan(&x.ID, &x.UUID, &x.ProjectID, &x.UserID, &ctype, &x.Generation, &t.created, &t.updated); err != nil {
		return err
	}
	x.ConsumerTypeID = ctype.Int64
	x.CreatedAt, x.UpdatedAt = fromNanos(t.created), fromNanos(t.updated)
	return nil
}

func scanAllocation(rs *sql.Rows, x *store.AllocationRow) error {
	var t times
	if err := rs.Scan(&x.ID, &x.ProviderID, &x.ConsumerID, &x.ClassID, &x.Used, &t.created, &t.updated); err != nil {
		return err
	}
	x.CreatedAt, x.UpdatedAt = fromNanos(t.created), fromNanos(t.updated)
	return nil
}
