package schema

// Set holds every compiled Placement request schema. Build it once with New
// and share it; it is read-only.
//
// In all accessors, minor is the minor part of the request's microversion
// 1.<minor> (every Placement microversion is 1.x).
type Set struct {
	providerCreate, providerCreate14 *Schema
	providerUpdate, providerUpdate14 *Schema
	providerList                     map[int]*Schema // keyed by introducing minor
	providerListV15                  map[int]*Schema // the same, with 15.0.0's uuid format

	inventoryCreate, inventoryUpdate, inventoriesReplace *Schema

	resourceClassCreate, resourceClassUpdate *Schema

	customTrait, traitsPut, providerTraitsSet, traitListQuery *Schema

	aggregates, aggregates19 *Schema

	allocationsPut  map[int]*Schema
	allocationsPost map[int]*Schema
	reshaper        map[int]*Schema
	usages          map[int]*Schema
	candidates      map[int]*Schema
}

// New compiles all Placement schemas, one resource family at a time. It
// panics only if the built-in definitions are broken, which the package
// tests rule out.
func New() *Set {
	s := &Set{}
	s.addProviders()
	s.addInventories()
	s.addResourceClasses()
	s.addTraits()
	s.addAggregates()
	s.addAllocations()
	s.addReshaper()
	s.addUsages()
	s.addCandidates()
	return s
}
