package mysql

import (
	"context"
	"database/sql"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// tx is a store.Tx over one SQL transaction: one statement per record
// operation (two for InsertProvider, five for DeleteProvider), each
// error classified (errors.go).
type tx struct{ tx *sql.Tx }

// Commit commits; a conflict found at COMMIT (Galera's certification)
// matches store.ErrRetry.
func (t *tx) Commit() error { return classify(t.tx.Commit()) }

func (t *tx) Rollback() error { return t.tx.Rollback() }

// exec runs one statement, its error classified.
func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	return res, nil
}

// run runs one statement whose result is not needed.
func (t *tx) run(ctx context.Context, query string, args ...any) error {
	_, err := t.exec(ctx, query, args...)
	return err
}

// insert runs an INSERT and returns the new row's id.
func (t *tx) insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// execOne runs a statement that must match exactly one row; none is
// missing.
func (t *tx) execOne(ctx context.Context, missing error, query string, args ...any) error {
	res, err := t.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return missing
	}
	return nil
}

// InsertProvider inserts the row, then sets its tree links, which for a
// root name the new id.
func (t *tx) InsertProvider(ctx context.Context, p store.ProviderRow) (int64, error) {
	id, err := t.insert(ctx, `INSERT INTO resource_providers (uuid, name, generation, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		p.UUID, p.Name, p.Generation, nanos(p.CreatedAt), nullNanos(p.UpdatedAt))
	if err != nil {
		return 0, err
	}
	root := p.RootID
	if root == 0 {
		root = id
	}
	if _, err := t.exec(ctx, `UPDATE resource_providers SET root_provider_id = ?, parent_provider_id = ? WHERE id = ?`, root, nullID(p.ParentID), id); err != nil {
		return 0, err
	}
	return id, nil
}

func (t *tx) UpdateProvider(ctx context.Context, p store.ProviderRow) error {
	return t.run(ctx, `UPDATE resource_providers SET name = ?, parent_provider_id = ?, root_provider_id = ?, updated_at = ? WHERE id = ?`,
		p.Name, nullID(p.ParentID), p.RootID, nullNanos(p.UpdatedAt), p.ID)
}

// DeleteProvider removes the provider's links first; its root link is
// cleared because a root references itself.
func (t *tx) DeleteProvider(ctx context.Context, id int64) error {
	for _, q := range []string{
		`DELETE FROM inventories WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_traits WHERE resource_provider_id = ?`,
		`UPDATE resource_providers SET root_provider_id = NULL WHERE id = ?`,
		`DELETE FROM resource_providers WHERE id = ?`,
	} {
		if _, err := t.exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) BumpProviderGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return t.execOne(ctx, store.ErrConcurrentUpdate, `UPDATE resource_providers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		nanos(updatedAt), id, expected)
}

func (t *tx) InsertInventory(ctx context.Context, i store.InventoryRow) error {
	return t.run(ctx, `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.ProviderID, i.ClassID, i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio, nanos(i.CreatedAt), nullNanos(i.UpdatedAt))
}

func (t *tx) UpdateInventory(ctx context.Context, i store.InventoryRow) error {
	return t.execOne(ctx, store.ErrNotFound, `UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, allocation_ratio = ?, updated_at = ? WHERE resource_provider_id = ? AND resource_class_id = ?`,
		i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio, nullNanos(i.UpdatedAt), i.ProviderID, i.ClassID)
}

func (t *tx) DeleteInventory(ctx context.Context, providerID, classID int64) error {
	return t.run(ctx, `DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?`, providerID, classID)
}

func (t *tx) InsertResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return t.run(ctx, `INSERT INTO resource_classes (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		c.ID, c.Name, nanos(c.CreatedAt), nullNanos(c.UpdatedAt))
}

func (t *tx) UpdateResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return t.run(ctx, `UPDATE resource_classes SET name = ?, updated_at = ? WHERE id = ?`, c.Name, nullNanos(c.UpdatedAt), c.ID)
}

func (t *tx) DeleteResourceClass(ctx context.Context, id int64) error {
	return t.run(ctx, `DELETE FROM resource_classes WHERE id = ?`, id)
}

func (t *tx) InsertTrait(ctx context.Context, tr store.TraitRow) (int64, error) {
	return t.insert(ctx, `INSERT INTO traits (name, created_at, updated_at) VALUES (?, ?, ?)`, tr.Name, nanos(tr.CreatedAt), nullNanos(tr.UpdatedAt))
}

func (t *tx) DeleteTrait(ctx context.Context, id int64) error {
	return t.run(ctx, `DELETE FROM traits WHERE id = ?`, id)
}

func (t *tx) InsertAggregate(ctx context.Context, uuid string) (int64, error) {
	return t.insert(ctx, `INSERT INTO placement_aggregates (uuid) VALUES (?)`, uuid)
}

// linkSQL adds and removes one row of a table linking providers to traits
// or aggregates.
type linkSQL struct{ add, remove string }

var (
	traitLinks = linkSQL{add: `INSERT INTO resource_provider_traits (resource_provider_id, trait_id) VALUES (?, ?)`,
		remove: `DELETE FROM resource_provider_traits WHERE resource_provider_id = ? AND trait_id = ?`}
	aggregateLinks = linkSQL{add: `INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id) VALUES (?, ?)`,
		remove: `DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id = ?`}
)

func (t *tx) AddProviderTrait(ctx context.Context, providerID, id int64) error {
	return t.run(ctx, traitLinks.add, providerID, id)
}

func (t *tx) RemoveProviderTrait(ctx context.Context, providerID, id int64) error {
	return t.run(ctx, traitLinks.remove, providerID, id)
}

func (t *tx) AddProviderAggregate(ctx context.Context, providerID, id int64) error {
	return t.run(ctx, aggregateLinks.add, providerID, id)
}

func (t *tx) RemoveProviderAggregate(ctx context.Context, providerID, id int64) error {
	return t.run(ctx, aggregateLinks.remove, providerID, id)
}

func (t *tx) InsertProject(ctx context.Context, externalID string) (int64, error) {
	return t.insert(ctx, `INSERT INTO projects (external_id) VALUES (?)`, externalID)
}

func (t *tx) InsertUser(ctx context.Context, externalID string) (int64, error) {
	return t.insert(ctx, `INSERT INTO users (external_id) VALUES (?)`, externalID)
}

func (t *tx) InsertConsumerType(ctx context.Context, ct store.ConsumerTypeRow) (int64, error) {
	return t.insert(ctx, `INSERT INTO consumer_types (name, created_at) VALUES (?, ?)`, ct.Name, nanos(ct.CreatedAt))
}

func (t *tx) InsertConsumer(ctx context.Context, c store.ConsumerRow) (int64, error) {
	return t.insert(ctx, `INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.UUID, c.ProjectID, c.UserID, nullID(c.ConsumerTypeID), c.Generation, nanos(c.CreatedAt), nullNanos(c.UpdatedAt))
}

func (t *tx) UpdateConsumer(ctx context.Context, c store.ConsumerRow) error {
	return t.execOne(ctx, store.ErrConcurrentUpdate, `UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = ? WHERE id = ? AND generation = ?`,
		c.ProjectID, c.UserID, nullID(c.ConsumerTypeID), nullNanos(c.UpdatedAt), c.ID, c.Generation)
}

func (t *tx) BumpConsumerGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return t.execOne(ctx, store.ErrConcurrentUpdate, `UPDATE consumers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		nanos(updatedAt), id, expected)
}

// DeleteConsumer relies on the schema's ON DELETE CASCADE for the
// consumer's allocations.
func (t *tx) DeleteConsumer(ctx context.Context, id int64) error {
	return t.run(ctx, `DELETE FROM consumers WHERE id = ?`, id)
}

func (t *tx) InsertAllocation(ctx context.Context, a store.AllocationRow) (int64, error) {
	return t.insert(ctx, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ProviderID, a.ConsumerID, a.ClassID, a.Used, nanos(a.CreatedAt), nullNanos(a.UpdatedAt))
}

func (t *tx) DeleteConsumerAllocations(ctx context.Context, consumerID int64) error {
	return t.run(ctx, `DELETE FROM allocations WHERE consumer_id = ?`, consumerID)
}

// tx implements the transaction contract.
var _ store.Tx = (*tx)(nil)
