package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (c *resourceClass) record() store.ResourceClass {
	return store.ResourceClass{Name: c.name, Standard: c.standard, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt}
}

// lookupClass finds a resource class by name or returns Placement's
// "No such resource class" error.
func (st *state) lookupClass(name string) (*resourceClass, error) {
	rc, ok := st.classes[name]
	if !ok {
		return nil, store.Errorf(store.ErrResourceClassNotFound, "No such resource class "+name+".")
	}
	return rc, nil
}

// ListResourceClasses returns every class in id order.
func (s *Store) ListResourceClasses(ctx context.Context) ([]store.ResourceClass, error) {
	var out []store.ResourceClass
	err := s.read(func(st *state) error {
		all := make([]*resourceClass, 0, len(st.classes))
		for _, rc := range st.classes {
			all = append(all, rc)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
		out = make([]store.ResourceClass, len(all))
		for i, rc := range all {
			out[i] = rc.record()
		}
		return nil
	})
	return out, err
}

// GetResourceClass returns one class.
func (s *Store) GetResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	var out store.ResourceClass
	err := s.read(func(st *state) error {
		rc, err := st.lookupClass(name)
		if err != nil {
			return err
		}
		out = rc.record()
		return nil
	})
	return out, err
}

// CreateResourceClass adds a custom class.
func (s *Store) CreateResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	rc, _, err := s.createClass(ctx, name, false)
	return rc, err
}

// EnsureResourceClass adds a custom class unless it exists.
func (s *Store) EnsureResourceClass(ctx context.Context, name string) (store.ResourceClass, bool, error) {
	return s.createClass(ctx, name, true)
}

// createClass inserts name with the next custom id; an existing class is
// ErrDuplicate, or returned as is when existingOK.
func (s *Store) createClass(ctx context.Context, name string, existingOK bool) (store.ResourceClass, bool, error) {
	var out store.ResourceClass
	created := false
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		st := s.st
		if rc, ok := st.classes[name]; ok {
			if existingOK {
				out = rc.record()
				return nil, nil
			}
			return nil, store.Errorf(store.ErrDuplicate, "Resource class "+name+" already exists.")
		}
		id := st.nextCustomClassID
		if _, err := tx.ExecContext(ctx, `INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?)`, id, name, nanos(now)); err != nil {
			return nil, fmt.Errorf("insert resource class %s: %w", name, err)
		}
		rc := &resourceClass{id: id, name: name, createdAt: now, providers: map[*provider]struct{}{}}
		out, created = rc.record(), true
		return func() {
			st.classes[name] = rc
			st.nextCustomClassID = id + 1
		}, nil
	})
	return out, created, err
}

// RenameResourceClass renames a custom class.
func (s *Store) RenameResourceClass(ctx context.Context, name, newName string) (store.ResourceClass, error) {
	var out store.ResourceClass
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		st := s.st
		rc, err := st.lookupClass(name)
		if err != nil {
			return nil, err
		}
		if rc.standard || rc.id < store.MinCustomResourceClassID {
			return nil, store.Errorf(store.ErrStandard, "Cannot update standard resource class "+name+".")
		}
		if other, ok := st.classes[newName]; ok && other != rc {
			return nil, store.Errorf(store.ErrDuplicate, "Resource class "+newName+" already exists.")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE resource_classes SET name = ?, updated_at = ? WHERE id = ?`, newName, nanos(now), rc.id); err != nil {
			return nil, fmt.Errorf("rename resource class %s: %w", name, err)
		}
		out = rc.record()
		out.Name, out.UpdatedAt = newName, now
		return func() {
			delete(st.classes, rc.name)
			rc.name, rc.updatedAt = newName, now
			st.classes[newName] = rc
		}, nil
	})
	return out, err
}

// DeleteResourceClass removes a custom class no inventory uses.
func (s *Store) DeleteResourceClass(ctx context.Context, name string) error {
	return s.write(ctx, func(tx *sql.Tx, now time.Time) (func(), error) {
		st := s.st
		rc, err := st.lookupClass(name)
		if err != nil {
			return nil, err
		}
		if rc.standard || rc.id < store.MinCustomResourceClassID {
			return nil, store.Errorf(store.ErrStandard, "Cannot delete standard resource class "+name+".")
		}
		if len(rc.providers) > 0 {
			return nil, store.Errorf(store.ErrResourceClassInUse, "Cannot delete resource class "+name+". Class is in use in inventory.")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM resource_classes WHERE id = ?`, rc.id); err != nil {
			return nil, fmt.Errorf("delete resource class %s: %w", name, err)
		}
		return func() { delete(st.classes, name) }, nil
	})
}
