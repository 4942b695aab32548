// Package sqlrows holds the SQL that both SQLite and MySQL/MariaDB
// accept: the record operations of store.Tx, the queries Load reads the
// tables with, and the migration scripts' listing and bookkeeping. Each
// backend keeps only what differs: how it connects, runs those queries,
// applies migrations and names its errors.
package sqlrows

import (
	"context"
	"database/sql"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Errors maps a driver's errors onto the contract's kinds (ErrDuplicate,
// ErrRetry); a backend implements it on a zero-size type.
type Errors interface{ Classify(err error) error }

// Session is one SQL transaction as a Tx runs it: a *sql.Tx, or a
// backend's own transaction on a pooled connection.
type Session interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	Commit() error
	Rollback() error
}

// Tx is a store.Tx over one SQL transaction: one statement per record
// operation (two for InsertProvider, five for DeleteProvider).
type Tx[C Errors] struct{ s Session }

// NewTx runs the record operations in s.
func NewTx[C Errors](s Session) *Tx[C] { return &Tx[C]{s: s} }

// Commit commits; an error found at COMMIT (Galera's certification, say)
// is classified too.
func (t *Tx[C]) Commit() error {
	err := t.s.Commit()
	if err != nil {
		var c C
		return c.Classify(err)
	}
	return nil
}

// Rollback rolls back.
func (t *Tx[C]) Rollback() error { return t.s.Rollback() }

// Exec runs one statement, its error classified.
func (t *Tx[C]) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := t.s.ExecContext(ctx, query, args...)
	if err != nil {
		var c C
		return nil, c.Classify(err)
	}
	return res, nil
}

// Run runs one statement whose result is not needed.
func (t *Tx[C]) Run(ctx context.Context, query string, args ...any) error {
	_, err := t.Exec(ctx, query, args...)
	return err
}

// Insert runs an INSERT and returns the new row's id.
func (t *Tx[C]) Insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// ExecOne runs a statement that must match exactly one row; none is
// missing.
func (t *Tx[C]) ExecOne(ctx context.Context, missing error, query string, args ...any) error {
	res, err := t.Exec(ctx, query, args...)
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

// Nanos is a time as both backends store it: Unix nanoseconds.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// NullNanos is Nanos, or NULL for the zero time.
func NullNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// nullID stores a reference id, NULL for 0 (none).
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func (t *Tx[C]) InsertProvider(ctx context.Context, p store.ProviderRow) (int64, error) {
	id, err := t.Insert(ctx, `INSERT INTO resource_providers (uuid, name, generation, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		p.UUID, p.Name, p.Generation, Nanos(p.CreatedAt), NullNanos(p.UpdatedAt))
	if err != nil {
		return 0, err
	}
	root := p.RootID
	if root == 0 {
		root = id
	}
	if _, err := t.Exec(ctx, `UPDATE resource_providers SET root_provider_id = ?, parent_provider_id = ? WHERE id = ?`, root, nullID(p.ParentID), id); err != nil {
		return 0, err
	}
	return id, nil
}

func (t *Tx[C]) UpdateProvider(ctx context.Context, p store.ProviderRow) error {
	return t.Run(ctx, `UPDATE resource_providers SET name = ?, parent_provider_id = ?, root_provider_id = ?, updated_at = ? WHERE id = ?`,
		p.Name, nullID(p.ParentID), p.RootID, NullNanos(p.UpdatedAt), p.ID)
}

// DeleteProvider removes the provider's links first; its root link is
// cleared because a root references itself.
func (t *Tx[C]) DeleteProvider(ctx context.Context, id int64) error {
	for _, q := range []string{
		`DELETE FROM inventories WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_traits WHERE resource_provider_id = ?`,
		`UPDATE resource_providers SET root_provider_id = NULL WHERE id = ?`,
		`DELETE FROM resource_providers WHERE id = ?`,
	} {
		if _, err := t.Exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx[C]) BumpProviderGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return t.ExecOne(ctx, store.ErrConcurrentUpdate, `UPDATE resource_providers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		Nanos(updatedAt), id, expected)
}

func (t *Tx[C]) InsertInventory(ctx context.Context, i store.InventoryRow) error {
	return t.Run(ctx, `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.ProviderID, i.ClassID, i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio, Nanos(i.CreatedAt), NullNanos(i.UpdatedAt))
}

func (t *Tx[C]) UpdateInventory(ctx context.Context, i store.InventoryRow) error {
	return t.ExecOne(ctx, store.ErrNotFound, `UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, allocation_ratio = ?, updated_at = ? WHERE resource_provider_id = ? AND resource_class_id = ?`,
		i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio, NullNanos(i.UpdatedAt), i.ProviderID, i.ClassID)
}

func (t *Tx[C]) DeleteInventory(ctx context.Context, providerID, classID int64) error {
	return t.Run(ctx, `DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?`, providerID, classID)
}

func (t *Tx[C]) InsertResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return t.Run(ctx, `INSERT INTO resource_classes (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		c.ID, c.Name, Nanos(c.CreatedAt), NullNanos(c.UpdatedAt))
}

func (t *Tx[C]) UpdateResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return t.Run(ctx, `UPDATE resource_classes SET name = ?, updated_at = ? WHERE id = ?`, c.Name, NullNanos(c.UpdatedAt), c.ID)
}

func (t *Tx[C]) DeleteResourceClass(ctx context.Context, id int64) error {
	return t.Run(ctx, `DELETE FROM resource_classes WHERE id = ?`, id)
}

func (t *Tx[C]) InsertTrait(ctx context.Context, tr store.TraitRow) (int64, error) {
	return t.Insert(ctx, `INSERT INTO traits (name, created_at, updated_at) VALUES (?, ?, ?)`, tr.Name, Nanos(tr.CreatedAt), NullNanos(tr.UpdatedAt))
}

func (t *Tx[C]) DeleteTrait(ctx context.Context, id int64) error {
	return t.Run(ctx, `DELETE FROM traits WHERE id = ?`, id)
}

func (t *Tx[C]) InsertAggregate(ctx context.Context, uuid string) (int64, error) {
	return t.Insert(ctx, `INSERT INTO placement_aggregates (uuid) VALUES (?)`, uuid)
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

func (t *Tx[C]) AddProviderTrait(ctx context.Context, providerID, id int64) error {
	return t.Run(ctx, traitLinks.add, providerID, id)
}

func (t *Tx[C]) RemoveProviderTrait(ctx context.Context, providerID, id int64) error {
	return t.Run(ctx, traitLinks.remove, providerID, id)
}

func (t *Tx[C]) AddProviderAggregate(ctx context.Context, providerID, id int64) error {
	return t.Run(ctx, aggregateLinks.add, providerID, id)
}

func (t *Tx[C]) RemoveProviderAggregate(ctx context.Context, providerID, id int64) error {
	return t.Run(ctx, aggregateLinks.remove, providerID, id)
}

func (t *Tx[C]) InsertProject(ctx context.Context, externalID string) (int64, error) {
	return t.Insert(ctx, `INSERT INTO projects (external_id) VALUES (?)`, externalID)
}

func (t *Tx[C]) InsertUser(ctx context.Context, externalID string) (int64, error) {
	return t.Insert(ctx, `INSERT INTO users (external_id) VALUES (?)`, externalID)
}

func (t *Tx[C]) InsertConsumerType(ctx context.Context, ct store.ConsumerTypeRow) (int64, error) {
	return t.Insert(ctx, `INSERT INTO consumer_types (name, created_at) VALUES (?, ?)`, ct.Name, Nanos(ct.CreatedAt))
}

func (t *Tx[C]) InsertConsumer(ctx context.Context, c store.ConsumerRow) (int64, error) {
	return t.Insert(ctx, `INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.UUID, c.ProjectID, c.UserID, nullID(c.ConsumerTypeID), c.Generation, Nanos(c.CreatedAt), NullNanos(c.UpdatedAt))
}

func (t *Tx[C]) UpdateConsumer(ctx context.Context, c store.ConsumerRow) error {
	return t.ExecOne(ctx, store.ErrConcurrentUpdate, `UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = ? WHERE id = ? AND generation = ?`,
		c.ProjectID, c.UserID, nullID(c.ConsumerTypeID), NullNanos(c.UpdatedAt), c.ID, c.Generation)
}

func (t *Tx[C]) BumpConsumerGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return t.ExecOne(ctx, store.ErrConcurrentUpdate, `UPDATE consumers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		Nanos(updatedAt), id, expected)
}

// DeleteConsumer relies on the schema's ON DELETE CASCADE for the
// consumer's allocations.
func (t *Tx[C]) DeleteConsumer(ctx context.Context, id int64) error {
	return t.Run(ctx, `DELETE FROM consumers WHERE id = ?`, id)
}

func (t *Tx[C]) InsertAllocation(ctx context.Context, a store.AllocationRow) (int64, error) {
	return t.Insert(ctx, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ProviderID, a.ConsumerID, a.ClassID, a.Used, Nanos(a.CreatedAt), NullNanos(a.UpdatedAt))
}

func (t *Tx[C]) DeleteConsumerAllocations(ctx context.Context, consumerID int64) error {
	return t.Run(ctx, `DELETE FROM allocations WHERE consumer_id = ?`, consumerID)
}
