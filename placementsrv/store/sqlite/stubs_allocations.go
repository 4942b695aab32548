package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

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

func (s *Store) Reshape(ctx context.Context, inventories []store.ProviderInventories, allocations []store.ConsumerAllocations) error {
	return errTODO
}
