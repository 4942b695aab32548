package ledger

import (
	"context"
	"sort"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// objectActionError is upstream's ObjectActionError text, which handlers
// embed in their 400 details.
func objectActionError(action, reason string) error {
	return store.Errorf(store.ErrInvalid, "Object action "+action+" failed because: "+reason)
}

// CreateProvider inserts a provider at generation 0. Checks run in
// upstream's order: name, self-parenting, parent existence, then the
// unique uuid and name.
func (l *Ledger) CreateProvider(ctx context.Context, np store.NewProvider) (store.Provider, error) {
	var out store.Provider
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		if np.Name == "" {
			return nil, objectActionError("create", "name is required")
		}
		var parent *provider
		if np.ParentUUID != "" {
			if np.ParentUUID == np.UUID {
				return nil, objectActionError("create", "parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.")
			}
			var ok bool
			if parent, ok = st.providers[np.ParentUUID]; !ok {
				return nil, objectActionError("create", "parent provider UUID does not exist.")
			}
		}
		if _, dup := st.providers[np.UUID]; dup {
			return nil, store.Errorf(store.ErrDuplicate, "Conflicting resource provider uuid: "+np.UUID+" already exists.")
		}
		if _, dup := st.providersByName[np.Name]; dup {
			return nil, store.Errorf(store.ErrDuplicate, "Conflicting resource provider name: "+np.Name+" already exists.")
		}
		// A root gets its root id in a second statement, which upstream
		// counts as an update; a child is never "updated" at creation.
		row := store.ProviderRow{UUID: np.UUID, Name: np.Name, CreatedAt: now}
		if parent == nil {
			row.UpdatedAt = now
		} else {
			row.ParentID, row.RootID = parent.id, parent.root.id
		}
		id, err := tx.InsertProvider(ctx, row)
		if err != nil {
			return nil, err
		}
		p := newProvider(id, np.UUID, np.Name)
		p.createdAt = now
		p.root = p
		if parent != nil {
			p.parent, p.root = parent, parent.root
		} else {
			p.updatedAt = now
		}
		out = p.record()
		return func() {
			st.providers[p.uuid] = p
			st.providersByName[p.name] = p
			st.providerList = append(st.providerList, p) // ids only grow
			if parent != nil {
				parent.children[p] = struct{}{}
			}
		}, nil
	})
	return out, err
}

// GetProvider returns one provider.
func (l *Ledger) GetProvider(ctx context.Context, uuid string) (store.Provider, error) {
	return readRecord(l, uuid, (*state).lookupProvider, (*provider).record)
}

// UpdateProvider renames p and changes its parent as upstream's
// ResourceProvider.save does. Nothing is written when nothing changes, so
// updated_at moves only on a real change.
func (l *Ledger) UpdateProvider(ctx context.Context, uuid string, u store.ProviderUpdate) (store.Provider, error) {
	var out store.Provider
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		p, err := st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		newParent, err := st.checkNewParent(p, u)
		if err != nil {
			return nil, err
		}
		if other, ok := st.providersByName[u.Name]; ok && other != p {
			return nil, store.Errorf(store.ErrDuplicate, "Conflicting resource provider "+u.Name+" already exists.")
		}
		newRoot := p
		if newParent != nil {
			newRoot = newParent.root
		}
		rootChanged := newRoot != p.root
		if u.Name == p.name && newParent == p.parent && !rootChanged {
			out = p.record()
			return nil, nil
		}
		row := p.row()
		row.Name, row.ParentID, row.RootID, row.UpdatedAt = u.Name, 0, newRoot.id, now
		if newParent != nil {
			row.ParentID = newParent.id
		}
		if err := tx.UpdateProvider(ctx, row); err != nil {
			return nil, err
		}
		var moved []*provider
		if rootChanged {
			moved = p.descendants(nil)
			for _, d := range moved {
				row := d.row()
				row.RootID, row.UpdatedAt = newRoot.id, now
				if err := tx.UpdateProvider(ctx, row); err != nil {
					return nil, err
				}
			}
		}
		out = p.record()
		out.Name, out.RootUUID, out.ParentUUID, out.UpdatedAt = u.Name, newRoot.uuid, "", now
		if newParent != nil {
			out.ParentUUID = newParent.uuid
		}
		return func() {
			if p.name != u.Name {
				delete(st.providersByName, p.name)
				p.name = u.Name
				st.providersByName[p.name] = p
			}
			if p.parent != newParent {
				if p.parent != nil {
					delete(p.parent.children, p)
				}
				if newParent != nil {
					newParent.children[p] = struct{}{}
				}
				p.parent = newParent
			}
			p.root, p.updatedAt = newRoot, now
			for _, d := range moved {
				d.root, d.updatedAt = newRoot, now
			}
		}, nil
	})
	return out, err
}

// checkNewParent resolves the parent p would have after u, applying
// upstream's rules: the parent must exist; changing an existing parent or
// removing it needs AllowReparent; a provider cannot move under itself.
func (st *state) checkNewParent(p *provider, u store.ProviderUpdate) (*provider, error) {
	newParent := p.parent
	if u.ParentUUID != nil {
		newParent = nil
		if *u.ParentUUID != "" {
			pp, ok := st.providers[*u.ParentUUID]
			if !ok {
				return nil, objectActionError("create", "parent provider UUID does not exist.")
			}
			newParent = pp
		}
	}
	if newParent == nil {
		if p.parent != nil && !u.AllowReparent {
			return nil, objectActionError("update", "un-parenting a provider is not currently allowed.")
		}
		return nil, nil
	}
	if p.parent != nil && p.parent != newParent && !u.AllowReparent {
		return nil, objectActionError("update", "re-parenting a provider is not currently allowed.")
	}
	for a := newParent; a != nil; a = a.parent {
		if a == p {
			return nil, objectActionError("update", "creating loop in the provider tree is not allowed.")
		}
	}
	return newParent, nil
}

// descendants appends every provider below p to dst.
func (p *provider) descendants(dst []*provider) []*provider {
	for c := range p.children {
		dst = append(dst, c)
		dst = c.descendants(dst)
	}
	return dst
}

// DeleteProvider removes a provider that has no children and no
// allocations, with its inventories, traits and aggregate memberships.
func (l *Ledger) DeleteProvider(ctx context.Context, uuid string) error {
	return l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		p, err := st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		if len(p.children) > 0 {
			return nil, store.Errorf(store.ErrCannotDeleteParent, "Cannot delete resource provider that is a parent of another. Delete child providers first.")
		}
		if len(p.allocs) > 0 {
			return nil, store.Errorf(store.ErrProviderInUse, "Resource provider has allocations.")
		}
		if err := tx.DeleteProvider(ctx, p.id); err != nil {
			return nil, err
		}
		return func() { st.removeProvider(p) }, nil
	})
}

// removeProvider unlinks a deleted provider from every index.
func (st *state) removeProvider(p *provider) {
	delete(st.providers, p.uuid)
	delete(st.providersByName, p.name)
	i := sort.Search(len(st.providerList), func(i int) bool { return st.providerList[i].id >= p.id })
	if i < len(st.providerList) && st.providerList[i] == p {
		st.providerList = append(st.providerList[:i], st.providerList[i+1:]...)
	}
	if p.parent != nil {
		delete(p.parent.children, p)
	}
	for c := range p.inventories {
		delete(c.providers, p)
	}
	for t := range p.traits {
		delete(t.providers, p)
	}
	for a := range p.aggregates {
		delete(a.members, p)
	}
}

// sortProviderList orders providerList by id, after loading.
func (st *state) sortProviderList() {
	sort.Slice(st.providerList, func(i, j int) bool { return st.providerList[i].id < st.providerList[j].id })
}
