// Package schema holds the JSON Schemas of OpenStack Placement's request
// bodies and query strings (8.0.0's, with 15.0.0's query uuid format), one
// file per resource family, built on the jsonschema engine so that a
// failure reads exactly as Python's jsonschema 4.10.3 words it there.
//
// The schemas are built by New, once, into a Set whose accessors take the
// request's microversion; each schema's variants are keyed by the named
// microversion constants at which upstream's schema changes.
package schema

import "github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"

// Set holds every compiled Placement request schema. Build it once with New
// and share it; it is read-only.
//
// Accessors of a schema that changed with the microversion take the
// request's; their variants are keyed by the named microversion
// constants at which upstream's schemas change.
type Set struct {
	providerCreate, providerUpdate byVersion
	providerList                   byVersion
	providerListV15                byVersion // the same, with 15.0.0's uuid format

	inventoryCreate, inventoryUpdate, inventoriesReplace *jsonschema.Schema

	resourceClassCreate, resourceClassUpdate *jsonschema.Schema

	customTrait, traitsPut, providerTraitsSet, traitListQuery *jsonschema.Schema

	aggregates byVersion

	allocationsPut  byVersion
	allocationsPost byVersion
	reshaper        byVersion
	usages          byVersion
	candidates      byVersion
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
