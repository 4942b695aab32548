package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// CreateProvider inserts a provider at generation 0.
func (s *Store) CreateProvider(ctx context.Context, np store.NewProvider) (store.Provider, error) {
	var out store.Provider
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		st := s.st
		if _, dup := st.providersByName[np.Name]; dup {
			return nil, store.Errorf(store.ErrDuplicate, "Conflicting resource provider name: "+np.Name+" already exists.")
		}
		if _, dup := st.providers[np.UUID]; dup {
			return nil, store.Errorf(store.ErrDuplicate, "Conflicting resource provider uuid: "+np.UUID+" already exists.")
		}
		var parent *provider
		if np.ParentUUID != "" {
			var ok bool
			if parent, ok = st.providers[np.ParentUUID]; !ok {
				return nil, store.Errorf(store.ErrInvalid, "The resource provider's parent provider "+np.ParentUUID+" does not exist.")
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO resource_providers (uuid, name, generation, created_at, updated_at) VALUES (?, ?, 0, ?, ?)`,
			np.UUID, np.Name, nanos(now), nanos(now))
		if err != nil {
			return nil, err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		rootID := id
		var parentID any
		if parent != nil {
			rootID, parentID = parent.root.id, parent.id
		}
		if _, err := tx.ExecContext(ctx, `UPDATE resource_providers SET root_provider_id = ?, parent_provider_id = ? WHERE id = ?`, rootID, parentID, id); err != nil {
			return nil, err
		}
		p := newProvider(id, np.UUID, np.Name)
		p.createdAt, p.updatedAt = now, now
		p.root = p
		if parent != nil {
			p.parent, p.root = parent, parent.root
		}
		out = p.record()
		return func() {
			st.providers[p.uuid] = p
			st.providersByName[p.name] = p
			if parent != nil {
				parent.children[p] = struct{}{}
			}
		}, nil
	})
	return out, err
}

// GetProvider returns one provider.
func (s *Store) GetProvider(ctx context.Context, uuid string) (store.Provider, error) {
	var out store.Provider
	err := s.read(func(st *state) error {
		p, err := st.lookupProvider(uuid)
		if err != nil {
			return err
		}
		out = p.record()
		return nil
	})
	return out, err
}
