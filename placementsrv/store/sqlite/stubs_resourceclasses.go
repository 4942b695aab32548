package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

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
