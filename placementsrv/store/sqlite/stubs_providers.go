package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (s *Store) ListProviders(ctx context.Context, f store.ProviderFilter) ([]store.Provider, error) {
	return nil, errTODO
}

func (s *Store) UpdateProvider(ctx context.Context, uuid string, u store.ProviderUpdate) (store.Provider, error) {
	return store.Provider{}, errTODO
}

func (s *Store) DeleteProvider(ctx context.Context, uuid string) error { return errTODO }
