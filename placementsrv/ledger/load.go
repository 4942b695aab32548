package ledger

import (
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// loader links the rows of a store.Records into a state; the maps resolve
// the rows' id references.
type loader struct {
	st        *state
	classByID map[int64]*resourceClass
	traitByID map[int64]*trait
	provByID  map[int64]*provider
	aggByID   map[int64]*aggregate
	consByID  map[int64]*consumer
	projByID  map[int64]string
	userByID  map[int64]string
}

// buildState turns loaded records into the in-memory state.
func buildState(recs *store.Records) (*state, error) {
	ld := &loader{
		st:        newState(),
		classByID: make(map[int64]*resourceClass, len(recs.ResourceClasses)),
		traitByID: make(map[int64]*trait, len(recs.Traits)),
		provByID:  make(map[int64]*provider, len(recs.Providers)),
		aggByID:   make(map[int64]*aggregate, len(recs.Aggregates)),
		consByID:  make(map[int64]*consumer, len(recs.Consumers)),
		projByID:  make(map[int64]string, len(recs.Projects)),
		userByID:  make(map[int64]string, len(recs.Users)),
	}
	ld.names(recs)
	if err := ld.providers(recs); err != nil {
		return nil, err
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
		return nil, err
	}
	ld.st.sortProviderList()
	return ld.st, nil
}

// names loads resource classes, traits and aggregates.
func (ld *loader) names(recs *store.Records) {
	st := ld.st
	stdClasses := nameSet(standard.ResourceClasses())
	for _, r := range recs.ResourceClasses {
		c := &resourceClass{newNamed(r.ID, r.Name, stdClasses[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.classes[c.name] = c
		ld.classByID[c.id] = c
		if c.id >= st.nextCustomClassID {
			st.nextCustomClassID = c.id + 1
		}
	}
	stdTraits := nameSet(standard.Traits())
	for _, r := range recs.Traits {
		t := &trait{newNamed(r.ID, r.Name, stdTraits[r.Name], r.CreatedAt, r.UpdatedAt)}
		st.traits[t.name] = t
		ld.traitByID[t.id] = t
	}
	for _, r := range recs.Aggregates {
		a := &aggregate{id: r.ID, uuid: r.UUID, members: map[*provider]struct{}{}}
		st.aggregates[a.uuid] = a
		ld.aggByID[a.id] = a
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
		ld.provByID[p.id] = p
	}
	for _, r := range recs.Providers {
		p := ld.provByID[r.ID]
		p.root = p
		if root := ld.provByID[r.RootID]; r.RootID != 0 && root != nil {
			p.root = root
		}
		if r.ParentID != 0 {
			pp := ld.provByID[r.ParentID]
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
		p, c := ld.provByID[r.ProviderID], ld.classByID[r.ClassID]
		if p == nil || c == nil {
			return fmt.Errorf("inventory (%d, %d): dangling reference", r.ProviderID, r.ClassID)
		}
		p.inventories[c] = &inventory{class: c, InventoryAmounts: r.InventoryAmounts, createdAt: r.CreatedAt, updatedAt: r.UpdatedAt}
		c.providers[p] = struct{}{}
	}
	for _, r := range recs.ProviderTraits {
		if err := loadLink(ld, traitKind, ld.traitByID, "provider trait", r.ProviderID, r.TraitID); err != nil {
			return err
		}
	}
	for _, r := range recs.ProviderAggregates {
		if err := loadLink(ld, aggregateKind, ld.aggByID, "provider aggregate", r.ProviderID, r.AggregateID); err != nil {
			return err
		}
	}
	return nil
}

// loadLink links provider providerID to member id of relation k.
func loadLink[T linked](ld *loader, k linkKind[T], byID map[int64]T, what string, providerID, id int64) error {
	p, x := ld.provByID[providerID], byID[id]
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
		ld.projByID[r.ID] = r.ExternalID
	}
	for _, r := range recs.Users {
		st.users[r.ExternalID] = r.ID
		ld.userByID[r.ID] = r.ExternalID
	}
	for _, r := range recs.ConsumerTypes {
		st.consumerTypes[r.Name] = r.ID
		st.consumerTypeIDs[r.ID] = r.Name
	}
	for _, r := range recs.Consumers {
		c := &consumer{id: r.ID, uuid: r.UUID, projectID: ld.projByID[r.ProjectID], userID: ld.userByID[r.UserID],
			generation: r.Generation, createdAt: stampOf(r.CreatedAt), updatedAt: stampOf(r.UpdatedAt)}
		if r.ConsumerTypeID != 0 {
			c.consumerType = st.consumerTypeIDs[r.ConsumerTypeID]
		}
		st.consumers[c.uuid] = c
		ld.consByID[c.id] = c
	}
}

// allocations links allocations, in id order, to their consumers and
// providers and sums provider usage.
func (ld *loader) allocations(rows []store.AllocationRow) error {
	for _, r := range rows {
		a := &allocation{id: r.ID, provider: ld.provByID[r.ProviderID], consumer: ld.consByID[r.ConsumerID],
			class: ld.classByID[r.ClassID], used: r.Used, createdAt: stampOf(r.CreatedAt), updatedAt: stampOf(r.UpdatedAt)}
		if a.provider == nil || a.consumer == nil || a.class == nil {
			return fmt.Errorf("allocation %d: dangling reference", a.id)
		}
		a.consumer.allocs = append(a.consumer.allocs, a)
		a.provider.allocs[a] = struct{}{}
		a.provider.usage[a.class] += a.used
	}
	return nil
}
