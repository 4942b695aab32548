package ledger

import (
	"sort"

	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// idIndex resolves the row ids that change-feed operations carry to the
// records in memory, which are keyed by uuid and name. Loading builds it
// (buildState) while it links the rows; a replica keeps it in step
// with both its own writes (noteLocal) and the ones it applies (remote.go).
// Only the holder of Ledger.wmu uses it.
type idIndex struct {
	providers  map[int64]*provider
	classes    map[int64]*resourceClass
	traits     map[int64]*trait
	aggregates map[int64]*aggregate
	consumers  map[int64]*consumer
	projects   map[int64]string
	users      map[int64]string
	// stdClasses and stdTraits tell standard names from custom ones.
	stdClasses, stdTraits map[string]bool
}

// noteLocal brings the index up to date with operations this process
// wrote and has already applied to st through its own write path.
func (x *idIndex) noteLocal(st *state, ops []feed.Op) {
	for _, o := range ops {
		switch o.Kind {
		case feed.InsertProvider:
			x.providers[o.Provider.ID] = st.providers[o.Provider.UUID]
			st.keepProvidersSorted()
		case feed.DeleteProvider:
			delete(x.providers, o.ID)
		case feed.InsertResourceClass, feed.UpdateResourceClass:
			x.classes[o.Class.ID] = st.classes[o.Class.Name]
		case feed.DeleteResourceClass:
			delete(x.classes, o.ID)
		case feed.InsertTrait:
			x.traits[o.Trait.ID] = st.traits[o.Trait.Name]
		case feed.DeleteTrait:
			delete(x.traits, o.ID)
		case feed.InsertAggregate:
			x.aggregates[o.ID] = st.aggregates[o.Name]
		case feed.InsertProject:
			x.projects[o.ID] = o.Name
		case feed.InsertUser:
			x.users[o.ID] = o.Name
		case feed.InsertConsumer:
			x.consumers[o.Consumer.ID] = st.consumers[o.Consumer.UUID]
		case feed.DeleteConsumer:
			delete(x.consumers, o.ID)
		}
	}
}

// keepProvidersSorted restores the id order of providerList after a new
// provider was appended: ids grow, but a replica may have applied another
// replica's provider with a higher id that committed first.
func (st *state) keepProvidersSorted() {
	n := len(st.providerList)
	if n >= 2 && st.providerList[n-2].id > st.providerList[n-1].id {
		st.sortProviderList()
	}
}

// insertProviderSorted adds p to providerList at its id's place.
func (st *state) insertProviderSorted(p *provider) {
	i := sort.Search(len(st.providerList), func(i int) bool { return st.providerList[i].id >= p.id })
	st.providerList = append(st.providerList, nil)
	copy(st.providerList[i+1:], st.providerList[i:])
	st.providerList[i] = p
}
