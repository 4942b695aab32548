package memory

import (
	"context"
	"maps"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (x *tx) InsertTrait(ctx context.Context, tr store.TraitRow) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if taken(x.t.traits, 0, func(r store.TraitRow) string { return r.Name }, tr.Name) {
		return 0, duplicate("trait", tr.Name)
	}
	tr.ID = nextID(x.t.traits)
	tr.CreatedAt, tr.UpdatedAt = utc(tr.CreatedAt), utc(tr.UpdatedAt)
	x.t.traits[tr.ID] = tr
	return tr.ID, nil
}

func (x *tx) DeleteTrait(ctx context.Context, id int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	for k := range x.t.providerTraits {
		if k[1] == id {
			return missingRef("trait in use", id)
		}
	}
	delete(x.t.traits, id)
	return nil
}

// link adds the pair (provider a, b) to a link table after checking both
// ends exist; the caller checked the transaction.
func (x *tx) link(m map[[2]int64]struct{}, a, b int64, bExists bool) error {
	k := [2]int64{a, b}
	if _, ok := m[k]; ok {
		return duplicate("link", k)
	}
	if _, ok := x.t.providers[a]; !ok || !bExists {
		return missingRef("link", k)
	}
	m[k] = struct{}{}
	return nil
}

func (x *tx) unlink(ctx context.Context, m map[[2]int64]struct{}, a, b int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	delete(m, [2]int64{a, b})
	return nil
}

func (x *tx) AddProviderTrait(ctx context.Context, providerID, traitID int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	_, ok := x.t.traits[traitID]
	return x.link(x.t.providerTraits, providerID, traitID, ok)
}

func (x *tx) RemoveProviderTrait(ctx context.Context, providerID, traitID int64) error {
	return x.unlink(ctx, x.t.providerTraits, providerID, traitID)
}

func (x *tx) InsertAggregate(ctx context.Context, uuid string) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if taken(x.t.aggregates, 0, func(r store.AggregateRow) string { return r.UUID }, uuid) {
		return 0, duplicate("aggregate", uuid)
	}
	id := nextID(x.t.aggregates)
	x.t.aggregates[id] = store.AggregateRow{ID: id, UUID: uuid}
	return id, nil
}

func (x *tx) AddProviderAggregate(ctx context.Context, providerID, aggregateID int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	_, ok := x.t.aggregates[aggregateID]
	return x.link(x.t.providerAggs, providerID, aggregateID, ok)
}

func (x *tx) RemoveProviderAggregate(ctx context.Context, providerID, aggregateID int64) error {
	return x.unlink(ctx, x.t.providerAggs, providerID, aggregateID)
}

func (x *tx) insertExternal(ctx context.Context, m map[int64]store.ExternalIDRow, ext string) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if taken(m, 0, func(r store.ExternalIDRow) string { return r.ExternalID }, ext) {
		return 0, duplicate("external id", ext)
	}
	id := nextID(m)
	m[id] = store.ExternalIDRow{ID: id, ExternalID: ext}
	return id, nil
}

func (x *tx) InsertProject(ctx context.Context, externalID string) (int64, error) {
	return x.insertExternal(ctx, x.t.projects, externalID)
}

func (x *tx) InsertUser(ctx context.Context, externalID string) (int64, error) {
	return x.insertExternal(ctx, x.t.users, externalID)
}

func (x *tx) InsertConsumerType(ctx context.Context, ct store.ConsumerTypeRow) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if taken(x.t.consumerTypes, 0, func(r store.ConsumerTypeRow) string { return r.Name }, ct.Name) {
		return 0, duplicate("consumer type", ct.Name)
	}
	ct.ID = nextID(x.t.consumerTypes)
	ct.CreatedAt = utc(ct.CreatedAt)
	x.t.consumerTypes[ct.ID] = ct
	return ct.ID, nil
}

// consumerRefs checks a consumer's project, user and type exist.
func (x *tx) consumerRefs(c store.ConsumerRow) error {
	_, p := x.t.projects[c.ProjectID]
	_, u := x.t.users[c.UserID]
	_, ct := x.t.consumerTypes[c.ConsumerTypeID]
	if !p || !u || (c.ConsumerTypeID != 0 && !ct) {
		return missingRef("consumer references", [3]int64{c.ProjectID, c.UserID, c.ConsumerTypeID})
	}
	return nil
}

func (x *tx) InsertConsumer(ctx context.Context, c store.ConsumerRow) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if taken(x.t.consumers, 0, func(r store.ConsumerRow) string { return r.UUID }, c.UUID) {
		return 0, duplicate("consumer", c.UUID)
	}
	if err := x.consumerRefs(c); err != nil {
		return 0, err
	}
	c.ID = nextID(x.t.consumers)
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	x.t.consumers[c.ID] = c
	return c.ID, nil
}

func (x *tx) UpdateConsumer(ctx context.Context, c store.ConsumerRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	cur, ok := x.t.consumers[c.ID]
	if !ok || cur.Generation != c.Generation {
		return store.ErrConcurrentUpdate
	}
	if err := x.consumerRefs(c); err != nil {
		return err
	}
	cur.ProjectID, cur.UserID, cur.ConsumerTypeID, cur.UpdatedAt = c.ProjectID, c.UserID, c.ConsumerTypeID, utc(c.UpdatedAt)
	x.t.consumers[c.ID] = cur
	return nil
}

func (x *tx) BumpConsumerGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	c, ok := x.t.consumers[id]
	if !ok || c.Generation != expected {
		return store.ErrConcurrentUpdate
	}
	c.Generation++
	c.UpdatedAt = utc(updatedAt)
	x.t.consumers[id] = c
	return nil
}

func (x *tx) DeleteConsumer(ctx context.Context, id int64) error {
	if err := x.DeleteConsumerAllocations(ctx, id); err != nil {
		return err
	}
	delete(x.t.consumers, id)
	return nil
}

func (x *tx) InsertAllocation(ctx context.Context, a store.AllocationRow) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	if _, ok := x.t.consumers[a.ConsumerID]; !ok {
		return 0, missingRef("consumer", a.ConsumerID)
	}
	if err := x.providerAndClass(a.ProviderID, a.ClassID); err != nil {
		return 0, err
	}
	a.ID = nextID(x.t.allocations)
	a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
	x.t.allocations[a.ID] = a
	return a.ID, nil
}

func (x *tx) DeleteConsumerAllocations(ctx context.Context, consumerID int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	maps.DeleteFunc(x.t.allocations, func(_ int64, a store.AllocationRow) bool { return a.ConsumerID == consumerID })
	return nil
}

// tx implements the transaction contract.
var _ store.Tx = (*tx)(nil)
