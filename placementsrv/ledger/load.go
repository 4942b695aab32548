package ledger

import (
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// loader links the rows of a store.Records into a state; x resolves the
// rows' id references, and is the index a replica applies the change feed
// with (index.go).
type loader struct {
	st *state
	x  *idIndex
}

// buildState turns loaded records into the in-memory state and the index
// of its ids.
func buildState(recs *store.Records) (*state, *idIndex, error) {
	ld := &loader{
		st: newState(),
		x: &idIndex{
			providers:  make(map[int64]*provider, len(recs.Providers)),
			classes:    make(map[int64]*resourceClass, len(recs.ResourceClasses)),
			traits:     make(map[int64]*trait, len(recs.Traits)),
			aggregates: make(map[int64]*aggregate, len(recs.Aggregates)),
			consumers:  make(map[int64]*consumer, len(recs.Consumers)),
			projects:   make(map[int64]string, len(recs.Projects)),
			users:      make(map[int64]string, len(recs.Users)),
			stdClasses: nameSet(standard.ResourceClasses()),
			stdTraits:  nameSet(standard.Traits()),
		},
	}
	ld.names(recs)
	if err := ld.providers(recs); err != nil {
		return nil, nil, err
	}
	// Links and allocations are the bulk of a large cloud and write
	// disjoint fields (inventories, traits and aggregates against
	// consumers, allocations and usage), reading only the id maps built
	// above: they are linked side by side.
	var g errgroup.Group
	g.Go(func() error { return ld.providerLinks(recs) })
	g.Go(func() error {
		ld.consumers(recs)
		return ld.allocations(recs.Allocations)
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	ld.st.sortProviderList()
	return ld.st, ld.x, nil
}

// names loads resource classes, traits and aggregates.
func (ld *loader) names(recs *store.Records) {
	st := ld.st
	for _, r := range recs.ResourceClasses {
		c := &resourceClass{newNamed(r.ID, r.Name, ld.x.stdClasses[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.classes[c.name] = c
		ld.x.classes[c.id] = c
		if c.id >= st.nextCustomClassID {
			st.nextCustomClassID = c.id + 1
		}
	}
	for _, r := range recs.Traits {
		t := &trait{newNamed(r.ID, r.Name, ld.x.stdTraits[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.traits[t.name] = t
		ld.x.traits[t.id] = t
	}
	for _, r := range recs.Aggregates {
		a := &aggregate{id: r.ID, uuid: r.UUID, members: map[*provider]struct{}{}}
		st.aggregates[a.uuid] = a
		ld.x.aggregates[a.id] = a
	}
}

func nameSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// providers loads the providers, then links parents and roots (a parent
// may come after its child).
func (ld *loader) providers(recs *store.Records) error {
	st := ld.st
	for _, r := range recs.Providers {
		p := newProvider(r.ID, r.UUID, r.Name)
		p.generation = r.Generation
		p.createdAt, p.updatedAt = r.CreatedAt, r.UpdatedAt
		st.providers[p.uuid] = p
		st.providersByName[p.name] = p
		st.providerList = append(st.providerList, p)
		ld.x.providers[p.id] = p
	}
	for _, r := range recs.Providers {
		p := ld.x.providers[r.ID]
		p.root = p
		if root := ld.x.providers[r.RootID]; r.RootID != 0 && root != nil {
			p.root = root
		}
		if r.ParentID != 0 {
			pp := ld.x.providers[r.ParentID]
			if pp == nil {
				return fmt.Errorf("provider %s: parent %d missing", p.uuid, r.ParentID)
			}
			p.parent = pp
			pp.children[p] = struct{}{}
		}
	}
	return nil
}

// providerLinks loads inventories and trait and aggregate memberships.
func (ld *loader) providerLinks(recs *store.Records) error {
	for _, r := range recs.Inventories {
		p, c := ld.x.providers[r.ProviderID], ld.x.classes[r.ClassID]
		if p == nil || c == nil {
			return fmt.Errorf("inventory (%d, %d): dangling reference", r.ProviderID, r.ClassID)
		}
		p.inventories[c] = &inventory{class: c, InventoryAmounts: r.InventoryAmounts, createdAt: r.CreatedAt, updatedAt: r.UpdatedAt}
		c.providers[p] = struct{}{}
	}
	for _, r := range recs.ProviderTraits {
		if err := loadLink(ld, traitKind, ld.x.traits, "provider trait", r.ProviderID, r.TraitID); err != nil {
			return err
		}
	}
	for _, r := range recs.ProviderAggregates {
		if err := loadLink(ld, aggregateKind, ld.x.aggregates, "provider aggregate", r.ProviderID, r.AggregateID); err != nil {
			return err
		}
	}
	return nil
}

// loadLink links provider providerID to member id of relation k.
func loadLink[T linked](ld *loader, k linkKind[T], byID map[int64]T, what string, providerID, id int64) error {
	p, x := ld.x.providers[providerID], byID[id]
	var none T
	if p == nil || x == none {
		return fmt.Errorf("%s (%d, %d): dangling reference", what, providerID, id)
	}
	k.link(p, x)
	return nil
}

// consumers loads projects, users, consumer types and consumers.
func (ld *loader) consumers(recs *store.Records) {
	st := ld.st
	for _, r := range recs.Projects {
		st.projects[r.ExternalID] = r.ID
		ld.x.projects[r.ID] = r.ExternalID
	}
	for _, r := range recs.Users {
		st.users[r.ExternalID] = r.ID
		ld.x.users[r.ID] = r.ExternalID
	}
	for _, r := range recs.ConsumerTypes {
		st.consumerTypes[r.Name] = r.ID
		st.consumerTypeIDs[r.ID] = r.Name
	}
	for _, r := range recs.Consumers {
		c := &consumer{id: r.ID, uuid: r.UUID, projectID: ld.x.projects[r.ProjectID], userID: ld.x.users[r.UserID],
			generation: r.Generation, createdAt: stampOf(r.CreatedAt), updatedAt: stampOf(r.UpdatedAt)}
		if r.ConsumerTypeID != 0 {
			c.consumerType = st.consumerTypeIDs[r.ConsumerTypeID]
		}
		st.consumers[c.uuid] = c
		ld.x.consumers[c.id] = c
	}
}

// allocations links allocations, in id order, to their consumers and
// providers and sums provider usage.
func (ld *loader) allocations(rows []store.AllocationRow) error {
	for _, r := range rows {
		a := &allocation{id: r.ID, provider: ld.x.providers[r.ProviderID], consumer: ld.x.consumers[r.ConsumerID],
			class: ld.x.classes[r.ClassID], used: r.Used, createdAt: stampOf(r.CreatedAt), updatedAt: stampOf(r.UpdatedAt)}
		if a.provider == nil || a.consumer == nil || a.class == nil {
			return fmt.Errorf("allocation %d: dangling reference", a.id)
		}
		a.consumer.allocs = append(a.consumer.allocs, a)
		a.provider.allocs[a] = struct{}{}
		a.provider.usage[a.class] += a.used
	}
	return nil
}
