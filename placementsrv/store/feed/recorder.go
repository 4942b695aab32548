package feed

import (
	"context"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Recorder is a store.Tx that records every write that succeeded, with
// the ids the wrapped transaction assigned.
type Recorder struct {
	store.Tx
	ops []Op
}

// NewRecorder wraps tx.
func NewRecorder(tx store.Tx) *Recorder { return &Recorder{Tx: tx} }

// Ops returns the operations recorded so far, in the order made.
func (r *Recorder) Ops() []Op { return r.ops }

func (r *Recorder) add(err error, o Op) error {
	if err == nil {
		r.ops = append(r.ops, o)
	}
	return err
}

// addID records op(id) when the insert that assigned id succeeded.
func (r *Recorder) addID(id int64, err error, op func(id int64) Op) (int64, error) {
	if err == nil {
		r.ops = append(r.ops, op(id))
	}
	return id, err
}

func (r *Recorder) InsertProvider(ctx context.Context, p store.ProviderRow) (int64, error) {
	id, err := r.Tx.InsertProvider(ctx, p)
	return r.addID(id, err, func(id int64) Op {
		p.ID = id
		if p.RootID == 0 {
			p.RootID = id
		}
		return Op{Kind: InsertProvider, Provider: &p}
	})
}

func (r *Recorder) UpdateProvider(ctx context.Context, p store.ProviderRow) error {
	return r.add(r.Tx.UpdateProvider(ctx, p), Op{Kind: UpdateProvider, Provider: &p})
}

func (r *Recorder) DeleteProvider(ctx context.Context, id int64) error {
	return r.add(r.Tx.DeleteProvider(ctx, id), Op{Kind: DeleteProvider, ID: id})
}

func (r *Recorder) BumpProviderGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return r.add(r.Tx.BumpProviderGeneration(ctx, id, expected, updatedAt),
		Op{Kind: BumpProviderGeneration, ID: id, Ref: expected, At: &updatedAt})
}

func (r *Recorder) InsertInventory(ctx context.Context, inv store.InventoryRow) error {
	return r.add(r.Tx.InsertInventory(ctx, inv), Op{Kind: InsertInventory, Inventory: &inv})
}

func (r *Recorder) UpdateInventory(ctx context.Context, inv store.InventoryRow) error {
	return r.add(r.Tx.UpdateInventory(ctx, inv), Op{Kind: UpdateInventory, Inventory: &inv})
}

func (r *Recorder) DeleteInventory(ctx context.Context, providerID, classID int64) error {
	return r.add(r.Tx.DeleteInventory(ctx, providerID, classID), Op{Kind: DeleteInventory, ID: providerID, Ref: classID})
}

func (r *Recorder) InsertResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return r.add(r.Tx.InsertResourceClass(ctx, c), Op{Kind: InsertResourceClass, Class: &c})
}

func (r *Recorder) UpdateResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	return r.add(r.Tx.UpdateResourceClass(ctx, c), Op{Kind: UpdateResourceClass, Class: &c})
}

func (r *Recorder) DeleteResourceClass(ctx context.Context, id int64) error {
	return r.add(r.Tx.DeleteResourceClass(ctx, id), Op{Kind: DeleteResourceClass, ID: id})
}

func (r *Recorder) InsertTrait(ctx context.Context, t store.TraitRow) (int64, error) {
	id, err := r.Tx.InsertTrait(ctx, t)
	return r.addID(id, err, func(id int64) Op { t.ID = id; return Op{Kind: InsertTrait, Trait: &t} })
}

func (r *Recorder) DeleteTrait(ctx context.Context, id int64) error {
	return r.add(r.Tx.DeleteTrait(ctx, id), Op{Kind: DeleteTrait, ID: id})
}

func (r *Recorder) AddProviderTrait(ctx context.Context, providerID, traitID int64) error {
	return r.add(r.Tx.AddProviderTrait(ctx, providerID, traitID), Op{Kind: AddProviderTrait, ID: providerID, Ref: traitID})
}

func (r *Recorder) RemoveProviderTrait(ctx context.Context, providerID, traitID int64) error {
	return r.add(r.Tx.RemoveProviderTrait(ctx, providerID, traitID), Op{Kind: RemoveProviderTrait, ID: providerID, Ref: traitID})
}

func (r *Recorder) InsertAggregate(ctx context.Context, uuid string) (int64, error) {
	id, err := r.Tx.InsertAggregate(ctx, uuid)
	return r.addID(id, err, func(id int64) Op { return Op{Kind: InsertAggregate, ID: id, Name: uuid} })
}

func (r *Recorder) AddProviderAggregate(ctx context.Context, providerID, aggregateID int64) error {
	return r.add(r.Tx.AddProviderAggregate(ctx, providerID, aggregateID),
		Op{Kind: AddProviderAggregate, ID: providerID, Ref: aggregateID})
}

func (r *Recorder) RemoveProviderAggregate(ctx context.Context, providerID, aggregateID int64) error {
	return r.add(r.Tx.RemoveProviderAggregate(ctx, providerID, aggregateID),
		Op{Kind: RemoveProviderAggregate, ID: providerID, Ref: aggregateID})
}

func (r *Recorder) InsertProject(ctx context.Context, externalID string) (int64, error) {
	id, err := r.Tx.InsertProject(ctx, externalID)
	return r.addID(id, err, func(id int64) Op { return Op{Kind: InsertProject, ID: id, Name: externalID} })
}

func (r *Recorder) InsertUser(ctx context.Context, externalID string) (int64, error) {
	id, err := r.Tx.InsertUser(ctx, externalID)
	return r.addID(id, err, func(id int64) Op { return Op{Kind: InsertUser, ID: id, Name: externalID} })
}

func (r *Recorder) InsertConsumerType(ctx context.Context, t store.ConsumerTypeRow) (int64, error) {
	id, err := r.Tx.InsertConsumerType(ctx, t)
	return r.addID(id, err, func(id int64) Op { t.ID = id; return Op{Kind: InsertConsumerType, ConsumerType: &t} })
}

func (r *Recorder) InsertConsumer(ctx context.Context, c store.ConsumerRow) (int64, error) {
	id, err := r.Tx.InsertConsumer(ctx, c)
	return r.addID(id, err, func(id int64) Op { c.ID = id; return Op{Kind: InsertConsumer, Consumer: &c} })
}

func (r *Recorder) UpdateConsumer(ctx context.Context, c store.ConsumerRow) error {
	return r.add(r.Tx.UpdateConsumer(ctx, c), Op{Kind: UpdateConsumer, Consumer: &c})
}

func (r *Recorder) BumpConsumerGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	return r.add(r.Tx.BumpConsumerGeneration(ctx, id, expected, updatedAt),
		Op{Kind: BumpConsumerGeneration, ID: id, Ref: expected, At: &updatedAt})
}

func (r *Recorder) DeleteConsumer(ctx context.Context, id int64) error {
	return r.add(r.Tx.DeleteConsumer(ctx, id), Op{Kind: DeleteConsumer, ID: id})
}

func (r *Recorder) InsertAllocation(ctx context.Context, a store.AllocationRow) (int64, error) {
	id, err := r.Tx.InsertAllocation(ctx, a)
	return r.addID(id, err, func(id int64) Op { a.ID = id; return Op{Kind: InsertAllocation, Allocation: &a} })
}

func (r *Recorder) DeleteConsumerAllocations(ctx context.Context, consumerID int64) error {
	return r.add(r.Tx.DeleteConsumerAllocations(ctx, consumerID), Op{Kind: DeleteConsumerAllocations, ID: consumerID})
}
