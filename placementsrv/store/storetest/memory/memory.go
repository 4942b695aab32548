// Package memory is a store.Backend that keeps its records in process
// memory: nothing outlives the process. It lets the ledger's own tests run
// without a database (the ledger cannot import one without an import
// cycle through storetest), and it is held to the same contract
// (storetest.Run) as the real backends, so those tests see faithful
// storage: unique keys, references, compare-and-swap, all-or-nothing
// transactions.
package memory

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// errClosed is returned by a Backend used after Close.
var errClosed = errors.New("memory backend closed")

// DB is one storage. Backends opened on it share its records, as
// processes opening the same database file would.
type DB struct {
	// writer is held by the open transaction, if any (capacity 1).
	writer chan struct{}
	mu     sync.RWMutex // guards committed
	// committed is replaced whole by Commit and never changed after.
	committed *tables
}

// New returns an empty storage.
func New() *DB {
	return &DB{writer: make(chan struct{}, 1), committed: newTables()}
}

// Open returns a Backend over d.
func (d *DB) Open() *Backend { return &Backend{db: d} }

// Backend is a store.Backend over a DB.
type Backend struct {
	db     *DB
	mu     sync.Mutex
	closed bool
}

func (b *Backend) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// Close makes b unusable; the DB keeps its records.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// Load returns copies of the committed records, rows with an id in id
// order.
func (b *Backend) Load(ctx context.Context) (*store.Records, error) {
	if b.isClosed() {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.db.mu.RLock()
	t := b.db.committed
	b.db.mu.RUnlock()
	r := &store.Records{
		ResourceClasses: byID(t.classes, func(r store.ResourceClassRow) int64 { return r.ID }),
		Traits:          byID(t.traits, func(r store.TraitRow) int64 { return r.ID }),
		Providers:       byID(t.providers, func(r store.ProviderRow) int64 { return r.ID }),
		Inventories:     slices.Collect(maps.Values(t.inventories)),
		Aggregates:      byID(t.aggregates, func(r store.AggregateRow) int64 { return r.ID }),
		Projects:        byID(t.projects, func(r store.ExternalIDRow) int64 { return r.ID }),
		Users:           byID(t.users, func(r store.ExternalIDRow) int64 { return r.ID }),
		ConsumerTypes:   byID(t.consumerTypes, func(r store.ConsumerTypeRow) int64 { return r.ID }),
		Consumers:       byID(t.consumers, func(r store.ConsumerRow) int64 { return r.ID }),
		Allocations:     byID(t.allocations, func(r store.AllocationRow) int64 { return r.ID }),
	}
	for k := range t.providerTraits {
		r.ProviderTraits = append(r.ProviderTraits, store.ProviderTraitRow{ProviderID: k[0], TraitID: k[1]})
	}
	for k := range t.providerAggs {
		r.ProviderAggregates = append(r.ProviderAggregates, store.ProviderAggregateRow{ProviderID: k[0], AggregateID: k[1]})
	}
	return r, nil
}

func byID[T any](m map[int64]T, id func(T) int64) []T {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(id(a), id(b)) })
	return out
}

// Begin waits for the writer slot and starts a transaction on a copy of
// the committed tables; Commit publishes the copy.
func (b *Backend) Begin(ctx context.Context) (store.Tx, error) {
	if b.isClosed() {
		return nil, errClosed
	}
	select {
	case b.db.writer <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.db.mu.RLock()
	t := b.db.committed.clone()
	b.db.mu.RUnlock()
	return &tx{ctx: ctx, b: b, t: t}, nil
}

// tx is a transaction: it changes its own copy t of the tables.
type tx struct {
	ctx  context.Context // Begin's: ending it ends the transaction
	b    *Backend
	t    *tables
	done bool
}

// check fails once the transaction ended or its context did.
func (x *tx) check(ctx context.Context) error {
	switch {
	case x.done:
		return errors.New("transaction already ended")
	case x.b.isClosed():
		return errClosed
	case x.ctx.Err() != nil:
		return x.ctx.Err()
	}
	return ctx.Err()
}

func (x *tx) end() {
	x.done = true
	x.t = nil
	<-x.b.db.writer
}

func (x *tx) Commit() error {
	if err := x.check(context.Background()); err != nil {
		if !x.done {
			x.end()
		}
		return err
	}
	x.b.db.mu.Lock()
	x.b.db.committed = x.t
	x.b.db.mu.Unlock()
	x.end()
	return nil
}

func (x *tx) Rollback() error {
	if x.done {
		return nil
	}
	x.end()
	return nil
}

// tables holds every record; link tables are keyed by their id pairs.
type tables struct {
	classes        map[int64]store.ResourceClassRow
	traits         map[int64]store.TraitRow
	providers      map[int64]store.ProviderRow
	inventories    map[[2]int64]store.InventoryRow
	providerTraits map[[2]int64]struct{}
	aggregates     map[int64]store.AggregateRow
	providerAggs   map[[2]int64]struct{}
	projects       map[int64]store.ExternalIDRow
	users          map[int64]store.ExternalIDRow
	consumerTypes  map[int64]store.ConsumerTypeRow
	consumers      map[int64]store.ConsumerRow
	allocations    map[int64]store.AllocationRow
}

func newTables() *tables {
	return &tables{
		classes:        map[int64]store.ResourceClassRow{},
		traits:         map[int64]store.TraitRow{},
		providers:      map[int64]store.ProviderRow{},
		inventories:    map[[2]int64]store.InventoryRow{},
		providerTraits: map[[2]int64]struct{}{},
		aggregates:     map[int64]store.AggregateRow{},
		providerAggs:   map[[2]int64]struct{}{},
		projects:       map[int64]store.ExternalIDRow{},
		users:          map[int64]store.ExternalIDRow{},
		consumerTypes:  map[int64]store.ConsumerTypeRow{},
		consumers:      map[int64]store.ConsumerRow{},
		allocations:    map[int64]store.AllocationRow{},
	}
}

// clone copies every table; rows are values, so the copy is independent.
func (t *tables) clone() *tables {
	return &tables{
		classes:        maps.Clone(t.classes),
		traits:         maps.Clone(t.traits),
		providers:      maps.Clone(t.providers),
		inventories:    maps.Clone(t.inventories),
		providerTraits: maps.Clone(t.providerTraits),
		aggregates:     maps.Clone(t.aggregates),
		providerAggs:   maps.Clone(t.providerAggs),
		projects:       maps.Clone(t.projects),
		users:          maps.Clone(t.users),
		consumerTypes:  maps.Clone(t.consumerTypes),
		consumers:      maps.Clone(t.consumers),
		allocations:    maps.Clone(t.allocations),
	}
}

// Backend implements the persistence contract.
var _ store.Backend = (*Backend)(nil)
