package store

import (
	"context"
	"errors"
	"time"
)

// ErrRetry marks a transaction that the database aborted because of a
// conflict with other transactions; see Backend.
var ErrRetry = errors.New("transaction aborted by a conflict; retry it")

// Schema errors of every backend's Open and migrations: a schema the
// binary cannot use (as a *SchemaError, which carries the versions), or a
// database that holds someone else's tables.
var (
	ErrSchemaTooNew    = errors.New("database schema is newer than this binary")
	ErrSchemaTooOld    = errors.New("database schema is older than this binary")
	ErrForeignDatabase = errors.New("database holds tables that are not placement-syncd's")
)

// Backend is what the ledger (package placementsrv/ledger) needs from
// persistent storage: every record loaded at start, and transactions of
// record-level writes afterwards. It holds no Placement rules: the ledger
// validates every write against its in-memory copy before issuing it, so a
// Backend only stores rows, assigns ids, enforces uniqueness and reports
// lost compare-and-swaps. Package storetest checks an implementation
// against this contract.
//
// Rows reference each other by id. The Backend assigns ids, positive
// ones, except for resource classes, whose ids the ledger chooses (a
// standard class's is its index in the standard list, from 0); 0 in an
// optional reference (ParentID, RootID, ConsumerTypeID) means none. A new
// row's id is greater than the id of every row currently in its table
// (the ledger orders providers, traits, aggregates and allocations by id,
// as Placement does); ids of deleted rows may be reused only under that
// rule. Writes keep references valid: inserting a row that references a
// missing one, or deleting a row something still references (other than
// the links DeleteProvider and DeleteConsumer remove with it), fails. Times round-trip exactly (nanoseconds, returned in UTC); the zero
// time stands for a missing (NULL) timestamp.
//
// Errors: a write that would duplicate a unique key fails with an error
// matching ErrDuplicate (errors.Is); a compare-and-swap that matches no
// row fails with one matching ErrConcurrentUpdate; an update of a row that
// does not exist fails with one matching ErrNotFound where stated. A
// transaction the database aborted because of other transactions (a
// deadlock, a lock wait timeout, a cluster's certification failure), at
// any operation or at Commit, fails with one matching ErrRetry: nothing
// of it was committed, and running the whole write again may succeed.
// Other failures (I/O, closed storage, cancelled context) are returned as
// they are; the ledger adds context and reports them as internal errors.
// A Commit that fails without ErrRetry may or may not have committed.
type Backend interface {
	// Load returns every record as of the last committed transaction.
	// Slices of rows with an id are in ascending id order; link rows
	// (inventories, provider traits and aggregates) come in any order.
	Load(ctx context.Context) (*Records, error)
	// Begin starts a write transaction. Its writes are invisible to Load
	// until Commit returns nil and are all discarded by Rollback, by a
	// failed Commit, or when ctx ends first. Begin may wait while another
	// transaction (of this or another process) is open; the ledger never
	// opens two at once.
	Begin(ctx context.Context) (Tx, error)
	// Metadata returns the value stored under name among the facts the
	// database keeps about itself (names in metadata.go), and whether
	// there is one. These are not Placement records: Load, the change
	// feed, 'db import' and 'db export' leave them out.
	Metadata(ctx context.Context, name string) (value string, ok bool, err error)
	// SetMetadata stores value under name, replacing any, durably and
	// outside any transaction of Begin's.
	SetMetadata(ctx context.Context, name, value string) error
	// Close releases the storage; committed writes are durable.
	Close() error
}

// Tx is one write transaction. Operations run in the order called, each
// seeing the previous ones. After an operation fails the ledger only
// rolls back, so a Tx need not stay usable.
type Tx interface {
	// InsertProvider inserts p (its ID ignored) and returns the new id.
	// RootID 0 makes the provider its own root. Unique: UUID; Name.
	InsertProvider(ctx context.Context, p ProviderRow) (int64, error)
	// UpdateProvider sets Name, ParentID, RootID and UpdatedAt of the
	// provider with p.ID; generation and creation time stay.
	UpdateProvider(ctx context.Context, p ProviderRow) error
	// DeleteProvider deletes a provider together with its inventories,
	// trait links and aggregate links (the traits and aggregates stay).
	// The ledger deletes only providers without children or allocations.
	DeleteProvider(ctx context.Context, id int64) error
	// BumpProviderGeneration increments the provider's generation and
	// sets its UpdatedAt, provided the generation still equals expected:
	// UPDATE … SET generation = generation + 1 WHERE id = ? AND
	// generation = ?. No such row is ErrConcurrentUpdate.
	BumpProviderGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error

	// InsertInventory inserts one inventory. Unique: (ProviderID, ClassID).
	InsertInventory(ctx context.Context, inv InventoryRow) error
	// UpdateInventory sets every amount, the ratio and UpdatedAt of the
	// inventory (ProviderID, ClassID); CreatedAt stays. No such row is
	// ErrNotFound (a row updated to the values it had still counts).
	UpdateInventory(ctx context.Context, inv InventoryRow) error
	// DeleteInventory deletes the inventory (providerID, classID).
	DeleteInventory(ctx context.Context, providerID, classID int64) error

	// InsertResourceClass inserts c with the id the ledger chose (the
	// standard index, or the next custom id). Unique: ID; Name.
	InsertResourceClass(ctx context.Context, c ResourceClassRow) error
	// UpdateResourceClass sets Name and UpdatedAt of the class c.ID.
	UpdateResourceClass(ctx context.Context, c ResourceClassRow) error
	// DeleteResourceClass deletes a class no inventory or allocation uses.
	DeleteResourceClass(ctx context.Context, id int64) error

	// InsertTrait inserts t (its ID ignored) and returns the new id.
	// Unique: Name.
	InsertTrait(ctx context.Context, t TraitRow) (int64, error)
	// DeleteTrait deletes a trait no provider has.
	DeleteTrait(ctx context.Context, id int64) error
	// AddProviderTrait links a trait to a provider. Unique: the pair.
	AddProviderTrait(ctx context.Context, providerID, traitID int64) error
	// RemoveProviderTrait unlinks a trait from a provider.
	RemoveProviderTrait(ctx context.Context, providerID, traitID int64) error

	// InsertAggregate inserts an aggregate and returns its id.
	// Unique: uuid.
	InsertAggregate(ctx context.Context, uuid string) (int64, error)
	// AddProviderAggregate makes a provider a member of an aggregate.
	// Unique: the pair.
	AddProviderAggregate(ctx context.Context, providerID, aggregateID int64) error
	// RemoveProviderAggregate ends a provider's membership.
	RemoveProviderAggregate(ctx context.Context, providerID, aggregateID int64) error

	// InsertProject and InsertUser insert an external (Keystone) id and
	// return the row id. Unique: the external id.
	InsertProject(ctx context.Context, externalID string) (int64, error)
	InsertUser(ctx context.Context, externalID string) (int64, error)
	// InsertConsumerType inserts t (its ID ignored) and returns the new
	// id. Unique: Name.
	InsertConsumerType(ctx context.Context, t ConsumerTypeRow) (int64, error)

	// InsertConsumer inserts c (its ID ignored) and returns the new id.
	// Unique: UUID.
	InsertConsumer(ctx context.Context, c ConsumerRow) (int64, error)
	// UpdateConsumer sets ProjectID, UserID, ConsumerTypeID and UpdatedAt
	// of the consumer c.ID, provided its generation still equals
	// c.Generation (which it leaves as is); otherwise ErrConcurrentUpdate.
	UpdateConsumer(ctx context.Context, c ConsumerRow) error
	// BumpConsumerGeneration is BumpProviderGeneration for a consumer.
	BumpConsumerGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error
	// DeleteConsumer deletes a consumer and any allocations it holds.
	DeleteConsumer(ctx context.Context, id int64) error

	// InsertAllocation inserts a (its ID ignored) and returns the new id.
	InsertAllocation(ctx context.Context, a AllocationRow) (int64, error)
	// DeleteConsumerAllocations deletes every allocation of a consumer.
	DeleteConsumerAllocations(ctx context.Context, consumerID int64) error

	// Commit makes every write durable and visible at once; the ledger
	// acknowledges a write to its client only after Commit returned nil.
	Commit() error
	// Rollback discards the writes. After Commit it does nothing; the
	// ledger ignores its error.
	Rollback() error
}

// Records is the whole persistent state as Backend.Load returns it.
type Records struct {
	ResourceClasses    []ResourceClassRow
	Traits             []TraitRow
	Providers          []ProviderRow
	Inventories        []InventoryRow
	ProviderTraits     []ProviderTraitRow
	Aggregates         []AggregateRow
	ProviderAggregates []ProviderAggregateRow
	Projects           []ExternalIDRow
	Users              []ExternalIDRow
	ConsumerTypes      []ConsumerTypeRow
	Consumers          []ConsumerRow
	Allocations        []AllocationRow
}

// ResourceClassRow is a standard or custom resource class.
type ResourceClassRow struct {
	ID        int64
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TraitRow is a standard or custom trait.
type TraitRow struct {
	ID        int64
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProviderRow is a resource provider; ParentID is 0 for a root.
type ProviderRow struct {
	ID         int64
	UUID       string
	Name       string
	Generation int64
	ParentID   int64
	RootID     int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// InventoryRow is one class's inventory on a provider.
type InventoryRow struct {
	ProviderID int64
	ClassID    int64
	InventoryAmounts
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProviderTraitRow links a trait to a provider.
type ProviderTraitRow struct {
	ProviderID int64
	TraitID    int64
}

// AggregateRow is an aggregate, known by its uuid.
type AggregateRow struct {
	ID   int64
	UUID string
}

// ProviderAggregateRow makes a provider a member of an aggregate.
type ProviderAggregateRow struct {
	ProviderID  int64
	AggregateID int64
}

// ExternalIDRow maps a project's or user's external id to a row id.
type ExternalIDRow struct {
	ID         int64
	ExternalID string
}

// ConsumerTypeRow is a consumer type (microversion 1.38).
type ConsumerTypeRow struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// ConsumerRow is a consumer; ConsumerTypeID is 0 when it has no type.
type ConsumerRow struct {
	ID             int64
	UUID           string
	ProjectID      int64
	UserID         int64
	ConsumerTypeID int64
	Generation     int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// AllocationRow is an amount of a class a consumer holds on a provider.
type AllocationRow struct {
	ID         int64
	ProviderID int64
	ConsumerID int64
	ClassID    int64
	Used       int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}
