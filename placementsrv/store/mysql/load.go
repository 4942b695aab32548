package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
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
	if r.ResourceClasses, err = queryRows(ctx, db, sqlrows.LoadClasses, scanClass); err != nil {
		return nil, err
	}
	if r.Traits, err = queryRows(ctx, db, sqlrows.LoadTraits, scanTrait); err != nil {
		return nil, err
	}
	if r.Providers, err = queryRows(ctx, db, sqlrows.LoadProviders, scanProvider); err != nil {
		return nil, err
	}
	if r.Inventories, err = queryRows(ctx, db, sqlrows.LoadInventories, scanInventory); err != nil {
		return nil, err
	}
	if r.ProviderTraits, err = queryRows(ctx, db, sqlrows.LoadProviderTraits, scanProviderTrait); err != nil {
		return nil, err
	}
	if r.Aggregates, err = queryRows(ctx, db, sqlrows.LoadAggregates, scanAggregate); err != nil {
		return nil, err
	}
	if r.ProviderAggregates, err = queryRows(ctx, db, sqlrows.LoadProviderAggregates, scanProviderAggregate); err != nil {
		return nil, err
	}
	if r.Projects, err = queryRows(ctx, db, sqlrows.LoadProjects, scanExternalID); err != nil {
		return nil, err
	}
	if r.Users, err = queryRows(ctx, db, sqlrows.LoadUsers, scanExternalID); err != nil {
		return nil, err
	}
	if r.ConsumerTypes, err = queryRows(ctx, db, sqlrows.LoadConsumerTypes, scanConsumerType); err != nil {
		return nil, err
	}
	if r.Consumers, err = queryRows(ctx, db, sqlrows.LoadConsumers, scanConsumer); err != nil {
		return nil, err
	}
	if r.Allocations, err = queryRows(ctx, db, sqlrows.LoadAllocations, scanAllocation, 0, int64(math.MaxInt64)); err != nil {
		return nil, err
	}
	return r, nil
}

// queryRows runs query and scans each result row into a T.
func queryRows[T any](ctx context.Context, db *sql.Tx, query string, scan func(*sql.Rows, *T) error, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
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
