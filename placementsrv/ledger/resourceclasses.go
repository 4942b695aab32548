package ledger

import (
	"context"
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

// customClass finds the custom class name, which is about to be changed
// (verb is "update" or "delete"); a standard class is ErrStandard.
func (st *state) customClass(name, verb string) (*resourceClass, error) {
	rc, err := st.lookupClass(name)
	if err != nil {
		return nil, err
	}
	if rc.standard || rc.id < store.MinCustomResourceClassID {
		return nil, store.Errorf(store.ErrStandard, "Cannot "+verb+" standard resource class "+name+".")
	}
	return rc, nil
}

// ListResourceClasses returns every class in id order.
func (l *Ledger) ListResourceClasses(ctx context.Context) ([]store.ResourceClass, error) {
	var out []store.ResourceClass
	err := l.read(func(st *state) error {
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
func (l *Ledger) GetResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	return readRecord(l, name, (*state).lookupClass, (*resourceClass).record)
}

// CreateResourceClass adds a custom class.
func (l *Ledger) CreateResourceClass(ctx context.Context, name string) (store.ResourceClass, error) {
	rc, _, err := l.createClass(ctx, name, false)
	return rc, err
}

// EnsureResourceClass adds a custom class unless it exists.
func (l *Ledger) EnsureResourceClass(ctx context.Context, name string) (store.ResourceClass, bool, error) {
	return l.createClass(ctx, name, true)
}

// createClass inserts name with the next custom id; an existing class is
// ErrDuplicate, or returned as is when existingOK.
func (l *Ledger) createClass(ctx context.Context, name string, existingOK bool) (store.ResourceClass, bool, error) {
	var out store.ResourceClass
	created := false
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		if rc, ok := st.classes[name]; ok {
			if existingOK {
				out = rc.record()
				return nil, nil
			}
			return nil, store.Errorf(store.ErrDuplicate, "Resource class "+name+" already exists.")
		}
		id := st.nextCustomClassID
		if err := tx.InsertResourceClass(ctx, store.ResourceClassRow{ID: id, Name: name, CreatedAt: now}); err != nil {
			return nil, fmt.Errorf("insert resource class %s: %w", name, err)
		}
		rc := &resourceClass{newNamed(id, name, false, now, time.Time{})}
		out, created = rc.record(), true
		return func() {
			st.classes[name] = rc
			st.nextCustomClassID = id + 1
		}, nil
	})
	return out, created, err
}

// RenameResourceClass renames a custom class.
func (l *Ledger) RenameResourceClass(ctx context.Context, name, newName string) (store.ResourceClass, error) {
	var out store.ResourceClass
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		rc, err := st.customClass(name, "update")
		if err != nil {
			return nil, err
		}
		if other, ok := st.classes[newName]; ok && other != rc {
			return nil, store.Errorf(store.ErrDuplicate, "Resource class "+newName+" already exists.")
		}
		if err := tx.UpdateResourceClass(ctx, store.ResourceClassRow{ID: rc.id, Name: newName, CreatedAt: rc.createdAt, UpdatedAt: now}); err != nil {
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
func (l *Ledger) DeleteResourceClass(ctx context.Context, name string) error {
	return l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		rc, err := st.customClass(name, "delete")
		if err != nil {
			return nil, err
		}
		if len(rc.providers) > 0 {
			return nil, store.Errorf(store.ErrResourceClassInUse, "Cannot delete resource class "+name+". Class is in use in inventory.")
		}
		if err := tx.DeleteResourceClass(ctx, rc.id); err != nil {
			return nil, fmt.Errorf("delete resource class %s: %w", name, err)
		}
		return func() { delete(st.classes, name) }, nil
	})
}
