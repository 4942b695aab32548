package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

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

func (s *Store) ProviderUsages(ctx context.Context, uuid string) (store.Provider, map[string]int64, error) {
	return store.Provider{}, nil, errTODO
}

func (s *Store) TotalUsages(ctx context.Context, f store.UsageFilter) (map[string]store.TypeUsage, error) {
	return nil, errTODO
}
