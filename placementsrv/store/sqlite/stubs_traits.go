package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

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
