package memory

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// duplicate is the error for a unique key already taken.
func duplicate(what string, key any) error {
	return fmt.Errorf("%s %v: %w", what, key, store.ErrDuplicate)
}

// missingRef is the error for a reference to a row that does not exist,
// or a delete of a row something still references.
func missingRef(what string, id any) error {
	return fmt.Errorf("reference violation: %s %v", what, id)
}

// nextID is one more than the largest id in m.
func nextID[T any](m map[int64]T) int64 {
	var top int64
	for id := range m {
		top = max(top, id)
	}
	return top + 1
}

// taken reports whether some row of m other than self has key.
func taken[T any](m map[int64]T, self int64, key func(T) string, want string) bool {
	for id, r := range m {
		if id != self && key(r) == want {
			return true
		}
	}
	return false
}

// utc stores times as Load returns them.
func utc(t time.Time) time.Time { return t.UTC() }

func (x *tx) InsertProvider(ctx context.Context, p store.ProviderRow) (int64, error) {
	if err := x.check(ctx); err != nil {
		return 0, err
	}
	t := x.t
	if taken(t.providers, 0, func(r store.ProviderRow) string { return r.UUID }, p.UUID) {
		return 0, duplicate("provider uuid", p.UUID)
	}
	if taken(t.providers, 0, func(r store.ProviderRow) string { return r.Name }, p.Name) {
		return 0, duplicate("provider name", p.Name)
	}
	p.ID = nextID(t.providers)
	if p.RootID == 0 {
		p.RootID = p.ID
	}
	if err := x.checkTreeLinks(p); err != nil {
		return 0, err
	}
	p.CreatedAt, p.UpdatedAt = utc(p.CreatedAt), utc(p.UpdatedAt)
	t.providers[p.ID] = p
	return p.ID, nil
}

func (x *tx) checkTreeLinks(p store.ProviderRow) error {
	for _, ref := range []int64{p.ParentID, p.RootID} {
		if _, ok := x.t.providers[ref]; ref != 0 && ref != p.ID && !ok {
			return missingRef("provider", ref)
		}
	}
	return nil
}

func (x *tx) UpdateProvider(ctx context.Context, p store.ProviderRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	cur, ok := x.t.providers[p.ID]
	if !ok {
		return nil
	}
	if taken(x.t.providers, p.ID, func(r store.ProviderRow) string { return r.Name }, p.Name) {
		return duplicate("provider name", p.Name)
	}
	if err := x.checkTreeLinks(p); err != nil {
		return err
	}
	cur.Name, cur.ParentID, cur.RootID, cur.UpdatedAt = p.Name, p.ParentID, p.RootID, utc(p.UpdatedAt)
	x.t.providers[p.ID] = cur
	return nil
}

func (x *tx) DeleteProvider(ctx context.Context, id int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	t := x.t
	for oid, r := range t.providers {
		if oid != id && (r.ParentID == id || r.RootID == id) {
			return missingRef("provider still linked from provider", oid)
		}
	}
	for _, a := range t.allocations {
		if a.ProviderID == id {
			return missingRef("provider still allocated from", id)
		}
	}
	maps.DeleteFunc(t.inventories, func(k [2]int64, _ store.InventoryRow) bool { return k[0] == id })
	maps.DeleteFunc(t.providerTraits, func(k [2]int64, _ struct{}) bool { return k[0] == id })
	maps.DeleteFunc(t.providerAggs, func(k [2]int64, _ struct{}) bool { return k[0] == id })
	delete(t.providers, id)
	return nil
}

func (x *tx) BumpProviderGeneration(ctx context.Context, id, expected int64, updatedAt time.Time) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	p, ok := x.t.providers[id]
	if !ok || p.Generation != expected {
		return store.ErrConcurrentUpdate
	}
	p.Generation++
	p.UpdatedAt = utc(updatedAt)
	x.t.providers[id] = p
	return nil
}

func (x *tx) InsertInventory(ctx context.Context, i store.InventoryRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	k := [2]int64{i.ProviderID, i.ClassID}
	if _, ok := x.t.inventories[k]; ok {
		return duplicate("inventory", k)
	}
	if err := x.providerAndClass(i.ProviderID, i.ClassID); err != nil {
		return err
	}
	i.CreatedAt, i.UpdatedAt = utc(i.CreatedAt), utc(i.UpdatedAt)
	x.t.inventories[k] = i
	return nil
}

func (x *tx) providerAndClass(providerID, classID int64) error {
	if _, ok := x.t.providers[providerID]; !ok {
		return missingRef("provider", providerID)
	}
	if _, ok := x.t.classes[classID]; !ok {
		return missingRef("resource class", classID)
	}
	return nil
}

func (x *tx) UpdateInventory(ctx context.Context, i store.InventoryRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	k := [2]int64{i.ProviderID, i.ClassID}
	cur, ok := x.t.inventories[k]
	if !ok {
		return store.ErrNotFound
	}
	i.CreatedAt, i.UpdatedAt = cur.CreatedAt, utc(i.UpdatedAt)
	x.t.inventories[k] = i
	return nil
}

func (x *tx) DeleteInventory(ctx context.Context, providerID, classID int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	delete(x.t.inventories, [2]int64{providerID, classID})
	return nil
}

func (x *tx) InsertResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	if _, ok := x.t.classes[c.ID]; ok {
		return duplicate("resource class id", c.ID)
	}
	if taken(x.t.classes, 0, func(r store.ResourceClassRow) string { return r.Name }, c.Name) {
		return duplicate("resource class", c.Name)
	}
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	x.t.classes[c.ID] = c
	return nil
}

func (x *tx) UpdateResourceClass(ctx context.Context, c store.ResourceClassRow) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	cur, ok := x.t.classes[c.ID]
	if !ok {
		return nil
	}
	if taken(x.t.classes, c.ID, func(r store.ResourceClassRow) string { return r.Name }, c.Name) {
		return duplicate("resource class", c.Name)
	}
	cur.Name, cur.UpdatedAt = c.Name, utc(c.UpdatedAt)
	x.t.classes[c.ID] = cur
	return nil
}

func (x *tx) DeleteResourceClass(ctx context.Context, id int64) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	for k := range x.t.inventories {
		if k[1] == id {
			return missingRef("resource class in use", id)
		}
	}
	for _, a := range x.t.allocations {
		if a.ClassID == id {
			return missingRef("resource class in use", id)
		}
	}
	delete(x.t.classes, id)
	return nil
}
