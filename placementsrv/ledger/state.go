package ledger

import (
	"sort"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// state is the in-memory copy of every record. Readers hold
// Ledger.mu for reading; only apply closures (see Ledger.write) change it,
// under Ledger.mu held for writing. Records link by pointer, so renaming a
// resource class or trait touches one record.
type state struct {
	providers       map[string]*provider // by uuid
	providersByName map[string]*provider
	providerList    []*provider               // every provider, ordered by id
	classes         map[string]*resourceClass // by name
	traits          map[string]*trait         // by name
	aggregates      map[string]*aggregate     // by uuid
	consumers       map[string]*consumer      // by uuid
	projects        map[string]int64          // external id -> row id
	users           map[string]int64
	consumerTypes   map[string]int64 // name -> row id
	consumerTypeIDs map[int64]string
	// nextCustomClassID is the id the next custom resource class gets.
	nextCustomClassID int64
	// usageLog lists the providers whose usage, inventories or generation
	// the apply being run changed (repeats allowed); see Ledger.writeUsage.
	usageLog []*provider
}

type provider struct {
	id         int64
	uuid       string
	name       string
	generation int64
	parent     *provider // nil for a root
	root       *provider // itself for a root
	children   map[*provider]struct{}
	createdAt  time.Time
	updatedAt  time.Time

	inventories map[*resourceClass]*inventory
	// usage is the sum of allocations per class, kept in step with allocs.
	usage      map[*resourceClass]int64
	allocs     map[*allocation]struct{}
	traits     map[*trait]struct{}
	aggregates map[*aggregate]struct{}
}

type inventory struct {
	class *resourceClass
	store.InventoryAmounts
	createdAt time.Time
	updatedAt time.Time
}

// named is what resource classes and traits both are: a named row,
// standard or custom, that providers link to.
type named struct {
	id        int64
	name      string
	standard  bool
	createdAt time.Time
	updatedAt time.Time
	// providers with an inventory of this class, or with this trait.
	providers map[*provider]struct{}
}

func newNamed(id int64, name string, standard bool, createdAt, updatedAt time.Time) named {
	return named{id: id, name: name, standard: standard, createdAt: createdAt, updatedAt: updatedAt,
		providers: map[*provider]struct{}{}}
}

func (n *named) rowID() int64 { return n.id }

type resourceClass struct{ named }

type trait struct{ named }

type aggregate struct {
	id      int64
	uuid    string
	members map[*provider]struct{}
}

type consumer struct {
	id           int64
	uuid         string
	projectID    string
	userID       string
	consumerType string // "" when unknown
	generation   int64
	createdAt    stamp
	updatedAt    stamp
	allocs       []*allocation
}

type allocation struct {
	id        int64
	provider  *provider
	consumer  *consumer
	class     *resourceClass
	used      int64
	createdAt stamp
	updatedAt stamp
}

// stamp is a time in Unix nanoseconds, 0 for the zero time: a third of
// time.Time's size and free of pointers, for the records a large cloud
// holds millions of (allocations, consumers), which it made 93 MB
// smaller at 100k hosts.
type stamp int64

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return 0
	}
	return stamp(t.UnixNano())
}

// time is the stamp in UTC, as the store returns times.
func (s stamp) time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s)).UTC()
}

func newState() *state {
	return &state{
		providers:         map[string]*provider{},
		providersByName:   map[string]*provider{},
		classes:           map[string]*resourceClass{},
		traits:            map[string]*trait{},
		aggregates:        map[string]*aggregate{},
		consumers:         map[string]*consumer{},
		projects:          map[string]int64{},
		users:             map[string]int64{},
		consumerTypes:     map[string]int64{},
		consumerTypeIDs:   map[int64]string{},
		nextCustomClassID: store.MinCustomResourceClassID,
	}
}

func newProvider(id int64, uuid, name string) *provider {
	return &provider{
		id:          id,
		uuid:        uuid,
		name:        name,
		children:    map[*provider]struct{}{},
		inventories: map[*resourceClass]*inventory{},
		usage:       map[*resourceClass]int64{},
		allocs:      map[*allocation]struct{}{},
		traits:      map[*trait]struct{}{},
		aggregates:  map[*aggregate]struct{}{},
	}
}

// record converts to the store's type.
func (p *provider) record() store.Provider {
	r := store.Provider{
		UUID:       p.uuid,
		Name:       p.name,
		Generation: p.generation,
		RootUUID:   p.root.uuid,
		CreatedAt:  p.createdAt,
		UpdatedAt:  p.updatedAt,
	}
	if p.parent != nil {
		r.ParentUUID = p.parent.uuid
	}
	return r
}

// row is p as the backend stores it.
func (p *provider) row() store.ProviderRow {
	r := store.ProviderRow{ID: p.id, UUID: p.uuid, Name: p.name, Generation: p.generation,
		RootID: p.root.id, CreatedAt: p.createdAt, UpdatedAt: p.updatedAt}
	if p.parent != nil {
		r.ParentID = p.parent.id
	}
	return r
}

func (i *inventory) record() store.Inventory {
	return store.Inventory{ResourceClass: i.class.name, InventoryAmounts: i.InventoryAmounts,
		CreatedAt: i.createdAt, UpdatedAt: i.updatedAt}
}

// row is i, an inventory of provider providerID, as the backend stores it.
func (i *inventory) row(providerID int64) store.InventoryRow {
	return store.InventoryRow{ProviderID: providerID, ClassID: i.class.id, InventoryAmounts: i.InventoryAmounts,
		CreatedAt: i.createdAt, UpdatedAt: i.updatedAt}
}

func (a *allocation) record() store.Allocation {
	return store.Allocation{
		ProviderUUID:  a.provider.uuid,
		ResourceClass: a.class.name,
		Used:          a.used,
		CreatedAt:     a.createdAt.time(),
		UpdatedAt:     a.updatedAt.time(),
	}
}

func (c *consumer) record() store.Consumer {
	return store.Consumer{
		UUID:         c.uuid,
		ProjectID:    c.projectID,
		UserID:       c.userID,
		ConsumerType: c.consumerType,
		Generation:   c.generation,
		CreatedAt:    c.createdAt.time(),
		UpdatedAt:    c.updatedAt.time(),
	}
}

// sortedInventories returns p's inventories ordered by class name.
func (p *provider) sortedInventories() []store.Inventory {
	out := make([]store.Inventory, 0, len(p.inventories))
	for _, inv := range p.inventories {
		out = append(out, inv.record())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ResourceClass < out[j].ResourceClass })
	return out
}

// notFoundProvider is the error for an unknown provider uuid.
func notFoundProvider(uuid string) error {
	return store.Errorf(store.ErrNotFound, "No resource provider with uuid "+uuid+" found")
}

// lookupProvider finds a provider or returns notFoundProvider.
func (st *state) lookupProvider(uuid string) (*provider, error) {
	p, ok := st.providers[uuid]
	if !ok {
		return nil, notFoundProvider(uuid)
	}
	return p, nil
}

// classNamesByID returns the names of a set of classes ordered by id, the
// order upstream's messages list them in.
func classNamesByID(set map[*resourceClass]bool) []string {
	return sortedByID(set, (*resourceClass).rowID, func(c *resourceClass) string { return c.name })
}
