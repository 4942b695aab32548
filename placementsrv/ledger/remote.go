package ledger

import (
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// apply patches st with one operation another replica committed, as that
// replica's own write path patched its memory, and keeps x in step. An
// operation that names a record st lacks means memory no longer matches
// the database: the caller then reloads everything.
func (x *idIndex) apply(st *state, o feed.Op) error {
	switch o.Kind {
	case feed.InsertProvider, feed.UpdateProvider, feed.DeleteProvider, feed.BumpProviderGeneration:
		return x.applyProvider(st, o)
	case feed.InsertInventory, feed.UpdateInventory, feed.DeleteInventory:
		return x.applyInventory(o)
	case feed.InsertResourceClass, feed.UpdateResourceClass, feed.DeleteResourceClass:
		return x.applyClass(st, o)
	case feed.InsertTrait, feed.DeleteTrait, feed.InsertAggregate:
		return x.applyName(st, o)
	case feed.AddProviderTrait, feed.RemoveProviderTrait, feed.AddProviderAggregate, feed.RemoveProviderAggregate:
		return x.applyLink(o)
	case feed.InsertProject, feed.InsertUser, feed.InsertConsumerType:
		x.applyExternal(st, o)
		return nil
	default:
		return x.applyConsumer(st, o)
	}
}

func missing(o feed.Op, what string, id int64) error {
	return fmt.Errorf("change operation %d: %s %d is not in memory", o.Kind, what, id)
}

func (x *idIndex) provider(o feed.Op, id int64) (*provider, error) {
	if p := x.providers[id]; p != nil {
		return p, nil
	}
	return nil, missing(o, "provider", id)
}

// optionalProvider resolves an optional reference (0 is none).
func (x *idIndex) optionalProvider(o feed.Op, id int64) (*provider, error) {
	if id == 0 {
		return nil, nil
	}
	return x.provider(o, id)
}

func (x *idIndex) applyProvider(st *state, o feed.Op) error {
	if o.Kind == feed.InsertProvider {
		r := o.Provider
		p := newProvider(r.ID, r.UUID, r.Name)
		p.generation, p.createdAt, p.updatedAt = r.Generation, r.CreatedAt, r.UpdatedAt
		x.providers[p.id] = p
		return x.placeProvider(st, o, p, r)
	}
	id := o.ID
	if o.Kind == feed.UpdateProvider {
		id = o.Provider.ID
	}
	p, err := x.provider(o, id)
	if err != nil {
		return err
	}
	switch o.Kind {
	case feed.UpdateProvider:
		delete(st.providersByName, p.name)
		p.name, p.updatedAt = o.Provider.Name, o.Provider.UpdatedAt
		if p.parent != nil {
			delete(p.parent.children, p)
		}
		return x.placeProvider(st, o, p, o.Provider)
	case feed.DeleteProvider:
		st.removeProvider(p)
		delete(x.providers, id)
	case feed.BumpProviderGeneration:
		p.generation, p.updatedAt = o.Ref+1, *o.At
		st.usageLog = append(st.usageLog, p)
	}
	return nil
}

// placeProvider links p, new or updated from row r, to its parent and
// root and into the indexes by uuid, name and id order.
func (x *idIndex) placeProvider(st *state, o feed.Op, p *provider, r *store.ProviderRow) error {
	parent, err := x.optionalProvider(o, r.ParentID)
	if err != nil {
		return err
	}
	p.parent, p.root = parent, p
	if parent != nil {
		parent.children[p] = struct{}{}
	}
	if r.RootID != 0 && r.RootID != p.id {
		if p.root, err = x.provider(o, r.RootID); err != nil {
			return err
		}
	}
	st.providersByName[p.name] = p
	if _, known := st.providers[p.uuid]; !known {
		st.providers[p.uuid] = p
		st.insertProviderSorted(p)
	}
	return nil
}

func (x *idIndex) applyInventory(o feed.Op) error {
	pid, cid := o.ID, o.Ref
	if o.Inventory != nil {
		pid, cid = o.Inventory.ProviderID, o.Inventory.ClassID
	}
	p, err := x.provider(o, pid)
	if err != nil {
		return err
	}
	c := x.classes[cid]
	if c == nil {
		return missing(o, "resource class", cid)
	}
	switch o.Kind {
	case feed.InsertInventory:
		r := o.Inventory
		p.inventories[c] = &inventory{class: c, InventoryAmounts: r.InventoryAmounts, createdAt: r.CreatedAt, updatedAt: r.UpdatedAt}
		c.providers[p] = struct{}{}
	case feed.UpdateInventory:
		inv := p.inventories[c]
		if inv == nil {
			return missing(o, "inventory of class", cid)
		}
		// A new value, not an edit in place: the read model may share it.
		p.inventories[c] = &inventory{class: c, InventoryAmounts: o.Inventory.InventoryAmounts,
			createdAt: inv.createdAt, updatedAt: o.Inventory.UpdatedAt}
	case feed.DeleteInventory:
		delete(p.inventories, c)
		delete(c.providers, p)
	}
	return nil
}

func (x *idIndex) applyClass(st *state, o feed.Op) error {
	if o.Kind == feed.InsertResourceClass {
		r := o.Class
		c := &resourceClass{newNamed(r.ID, r.Name, x.stdClasses[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.classes[c.name], x.classes[c.id] = c, c
		if c.id >= st.nextCustomClassID {
			st.nextCustomClassID = c.id + 1
		}
		return nil
	}
	id := o.ID
	if o.Class != nil {
		id = o.Class.ID
	}
	c := x.classes[id]
	if c == nil {
		return missing(o, "resource class", id)
	}
	delete(st.classes, c.name)
	if o.Kind == feed.DeleteResourceClass {
		delete(x.classes, id)
		return nil
	}
	c.name, c.updatedAt = o.Class.Name, o.Class.UpdatedAt
	st.classes[c.name] = c
	return nil
}

func (x *idIndex) applyName(st *state, o feed.Op) error {
	switch o.Kind {
	case feed.InsertTrait:
		r := o.Trait
		t := &trait{newNamed(r.ID, r.Name, x.stdTraits[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.traits[t.name], x.traits[t.id] = t, t
	case feed.DeleteTrait:
		t := x.traits[o.ID]
		if t == nil {
			return missing(o, "trait", o.ID)
		}
		delete(st.traits, t.name)
		delete(x.traits, o.ID)
	case feed.InsertAggregate:
		a := &aggregate{id: o.ID, uuid: o.Name, members: map[*provider]struct{}{}}
		st.aggregates[a.uuid], x.aggregates[a.id] = a, a
	}
	return nil
}

func (x *idIndex) applyLink(o feed.Op) error {
	p, err := x.provider(o, o.ID)
	if err != nil {
		return err
	}
	switch o.Kind {
	case feed.AddProviderTrait, feed.RemoveProviderTrait:
		t := x.traits[o.Ref]
		if t == nil {
			return missing(o, "trait", o.Ref)
		}
		if o.Kind == feed.AddProviderTrait {
			traitKind.link(p, t)
		} else {
			traitKind.apply(p, nil, []*trait{t})
		}
	default:
		a := x.aggregates[o.Ref]
		if a == nil {
			return missing(o, "aggregate", o.Ref)
		}
		if o.Kind == feed.AddProviderAggregate {
			aggregateKind.link(p, a)
		} else {
			aggregateKind.apply(p, nil, []*aggregate{a})
		}
	}
	return nil
}

func (x *idIndex) applyExternal(st *state, o feed.Op) {
	switch o.Kind {
	case feed.InsertProject:
		st.projects[o.Name], x.projects[o.ID] = o.ID, o.Name
	case feed.InsertUser:
		st.users[o.Name], x.users[o.ID] = o.ID, o.Name
	case feed.InsertConsumerType:
		st.consumerTypes[o.ConsumerType.Name] = o.ConsumerType.ID
		st.consumerTypeIDs[o.ConsumerType.ID] = o.ConsumerType.Name
	}
}

func (x *idIndex) applyConsumer(st *state, o feed.Op) error {
	if o.Kind == feed.InsertConsumer {
		c := &consumer{id: o.Consumer.ID, uuid: o.Consumer.UUID, createdAt: stampOf(o.Consumer.CreatedAt)}
		x.setConsumer(st, c, o.Consumer)
		st.consumers[c.uuid], x.consumers[c.id] = c, c
		return nil
	}
	id := o.ID
	switch o.Kind {
	case feed.UpdateConsumer:
		id = o.Consumer.ID
	case feed.InsertAllocation:
		id = o.Allocation.ConsumerID
	}
	c := x.consumers[id]
	if c == nil {
		return missing(o, "consumer", id)
	}
	switch o.Kind {
	case feed.UpdateConsumer:
		gen := c.generation
		x.setConsumer(st, c, o.Consumer)
		c.generation = gen
	case feed.BumpConsumerGeneration:
		c.generation, c.updatedAt = o.Ref+1, stampOf(*o.At)
	case feed.DeleteConsumer:
		detachAllocations(st, c)
		delete(st.consumers, c.uuid)
		delete(x.consumers, id)
	case feed.DeleteConsumerAllocations:
		detachAllocations(st, c)
	case feed.InsertAllocation:
		return x.applyAllocation(st, o, c)
	}
	return nil
}

// setConsumer sets c's owner, type, generation and update time from r.
func (x *idIndex) setConsumer(st *state, c *consumer, r *store.ConsumerRow) {
	c.projectID, c.userID = x.projects[r.ProjectID], x.users[r.UserID]
	c.consumerType = ""
	if r.ConsumerTypeID != 0 {
		c.consumerType = st.consumerTypeIDs[r.ConsumerTypeID]
	}
	c.generation, c.updatedAt = r.Generation, stampOf(r.UpdatedAt)
}

func (x *idIndex) applyAllocation(st *state, o feed.Op, c *consumer) error {
	r := o.Allocation
	p, err := x.provider(o, r.ProviderID)
	if err != nil {
		return err
	}
	class := x.classes[r.ClassID]
	if class == nil {
		return missing(o, "resource class", r.ClassID)
	}
	a := &allocation{id: r.ID, provider: p, consumer: c, class: class, used: r.Used, createdAt: stampOf(r.CreatedAt), updatedAt: stampOf(r.UpdatedAt)}
	c.allocs = append(c.allocs, a)
	attachAllocation(st, a)
	return nil
}
