package upstream

import (
	"database/sql"
	"errors"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func scanClass(rows *sql.Rows, c *store.ResourceClassRow) error {
	var created, updated sql.NullString
	if err := rows.Scan(&c.ID, &c.Name, &created, &updated); err != nil {
		return err
	}
	var err error
	c.CreatedAt, c.UpdatedAt, err = times(created, updated)
	return err
}

func scanTrait(rows *sql.Rows, t *store.TraitRow) error {
	var created, updated sql.NullString
	if err := rows.Scan(&t.ID, &t.Name, &created, &updated); err != nil {
		return err
	}
	var err error
	t.CreatedAt, t.UpdatedAt, err = times(created, updated)
	return err
}

func scanProvider(rows *sql.Rows, p *store.ProviderRow) error {
	var name, created, updated sql.NullString
	var gen, parent, root sql.NullInt64
	if err := rows.Scan(&p.ID, &p.UUID, &name, &gen, &parent, &root, &created, &updated); err != nil {
		return err
	}
	if !name.Valid {
		return errors.New("provider " + p.UUID + " has no name (NULL): name it through Placement's API first")
	}
	p.Name, p.Generation, p.ParentID, p.RootID = name.String, gen.Int64, parent.Int64, root.Int64
	var err error
	p.CreatedAt, p.UpdatedAt, err = times(created, updated)
	return err
}

func scanInventory(rows *sql.Rows, i *store.InventoryRow) error {
	var created, updated sql.NullString
	if err := rows.Scan(&i.ProviderID, &i.ClassID, &i.Total, &i.Reserved, &i.MinUnit, &i.MaxUnit, &i.StepSize, &i.AllocationRatio, &created, &updated); err != nil {
		return err
	}
	var err error
	i.CreatedAt, i.UpdatedAt, err = times(created, updated)
	return err
}

func scanProviderTrait(rows *sql.Rows, x *store.ProviderTraitRow) error {
	return rows.Scan(&x.ProviderID, &x.TraitID)
}

func scanProviderAggregate(rows *sql.Rows, x *store.ProviderAggregateRow) error {
	return rows.Scan(&x.ProviderID, &x.AggregateID)
}

func scanAggregate(rows *sql.Rows, a *store.AggregateRow) error {
	var uuid sql.NullString
	if err := rows.Scan(&a.ID, &uuid); err != nil {
		return err
	}
	if !uuid.Valid {
		return errors.New("aggregate without uuid (NULL)")
	}
	a.UUID = uuid.String
	return nil
}

func scanExternal(rows *sql.Rows, e *store.ExternalIDRow) error {
	return rows.Scan(&e.ID, &e.ExternalID)
}

func scanConsumerType(rows *sql.Rows, t *store.ConsumerTypeRow) error {
	var created sql.NullString
	if err := rows.Scan(&t.ID, &t.Name, &created); err != nil {
		return err
	}
	var err error
	t.CreatedAt, err = parseTime(created)
	return err
}

func scanConsumer(rows *sql.Rows, c *store.ConsumerRow) error {
	var ctype sql.NullInt64
	var created, updated sql.NullString
	if err := rows.Scan(&c.ID, &c.UUID, &c.ProjectID, &c.UserID, &ctype, &c.Generation, &created, &updated); err != nil {
		return err
	}
	c.ConsumerTypeID = ctype.Int64
	var err error
	c.CreatedAt, c.UpdatedAt, err = times(created, updated)
	return err
}

func scanAllocation(rows *sql.Rows, a *upstreamAllocation) error {
	var created, updated sql.NullString
	if err := rows.Scan(&a.row.ID, &a.row.ProviderID, &a.consumer, &a.row.ClassID, &a.row.Used, &created, &updated); err != nil {
		return err
	}
	var err error
	a.row.CreatedAt, a.row.UpdatedAt, err = times(created, updated)
	return err
}
