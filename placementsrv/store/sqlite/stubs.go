package sqlite

import (
	"context"
	"errors"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

var errTODO = errors.New("not implemented")

func (s *Store) ListProviders(ctx context.Context, f store.ProviderFilter) ([]store.Provider, error) {
	return nil, errTODO
}
func (s *Store) UpdateProvider(ctx context.Context, uuid string, u store.ProviderUpdate) (store.Provider, error) {
	return store.Provider{}, errTODO
}
func (s *Store) DeleteProvider(ctx context.Context, uuid string) error { return errTODO }

func (s *Store) GetInventories(ctx context.Context, uuid string) (store.Provider, []store.Inventory, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) SetInventories(ctx context.Context, uuid string, generation int64, invs []store.Inventory) (store.Provider, []store.Inventory, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) AddInventory(ctx context.Context, uuid string, inv store.Inventory) (store.Provider, store.Inventory, error) {
	return store.Provider{}, store.Inventory{}, errTODO
}
func (s *Store) UpdateInventory(ctx context.Context, uuid string, generation int64, inv store.Inventory) (store.Provider, store.Inventory, error) {
	return store.Provider{}, store.Inventory{}, errTODO
}
func (s *Store) DeleteInventory(ctx context.Context, uuid, resourceClass string) error {
	return errTODO
}
func (s *Store) DeleteAllInventories(ctx context.Context, uuid string) error { return errTODO }

func (s *Store) ListResourceClasses(ctx context.Context) ([]store.ResourceClass, error) {
	return nil, errTODO
}
func (s *Store) GetResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	return store.ResourceClass{}, errTODO
}
func (s *Store) CreateResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	return store.ResourceClass{}, errTODO
}
func (s *Store) EnsureResourceClass(ctx context.Context, name string) (store.ResourceClass, bool, error) {
	return store.ResourceClass{}, false, errTODO
}
func (s *Store) RenameResourceClass(ctx context.Context, name, newName string) (store.ResourceClass, error) {
	return store.ResourceClass{}, errTODO
}
func (s *Store) DeleteResourceClass(ctx context.Context, name string) error { return errTODO }

func (s *Store) ListTraits(ctx context.Context, f store.TraitFilter) ([]store.Trait, error) {
	return nil, errTODO
}
func (s *Store) GetTrait(ctx context.Context, name string) (store.Trait, error) {
	return store.Trait{}, errTODO
}
func (s *Store) EnsureTrait(ctx context.Context, name string) (store.Trait, bool, error) {
	return store.Trait{}, false, errTODO
}
func (s *Store) DeleteTrait(ctx context.Context, name string) error { return errTODO }
func (s *Store) MissingTraits(ctx context.Context, names []string) ([]string, error) {
	return nil, errTODO
}
func (s *Store) ProviderTraits(ctx context.Context, uuid string) (store.Provider, []string, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (store.Provider, []string, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) DeleteProviderTraits(ctx context.Context, uuid string) error { return errTODO }

func (s *Store) ProviderAggregates(ctx context.Context, uuid string) (store.Provider, []string, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) SetProviderAggregates(ctx context.Context, uuid string, generation *int64, aggregates []string) (store.Provider, []string, error) {
	return store.Provider{}, nil, errTODO
}

func (s *Store) ConsumerAllocations(ctx context.Context, consumerUUID string) (store.Consumer, []store.Allocation, error) {
	return store.Consumer{}, nil, errTODO
}
func (s *Store) ProviderAllocations(ctx context.Context, uuid string) (store.Provider, map[string][]store.Allocation, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) ReplaceAllocations(ctx context.Context, reqs []store.ConsumerAllocations) error {
	return errTODO
}
func (s *Store) DeleteConsumerAllocations(ctx context.Context, consumerUUID string) error {
	return errTODO
}

func (s *Store) ProviderUsages(ctx context.Context, uuid string) (store.Provider, map[string]int64, error) {
	return store.Provider{}, nil, errTODO
}
func (s *Store) TotalUsages(ctx context.Context, f store.UsageFilter) (map[string]store.TypeUsage, error) {
	return nil, errTODO
}

func (s *Store) Reshape(ctx context.Context, inventories []store.ProviderInventories, allocations []store.ConsumerAllocations) error {
	return errTODO
}

var _ store.Store = (*Store)(nil)
