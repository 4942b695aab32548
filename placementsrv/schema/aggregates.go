package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// Aggregate schemas (placement/schemas/aggregate.py).

func (s *Set) addAggregates() {
	list := obj(
		"type", "array",
		"items", uuidString(),
		"uniqueItems", true,
	)
	withGeneration := obj(
		"type", "object",
		"properties", obj(
			"aggregates", list.Clone(),
			"resource_provider_generation", obj("type", "integer"),
		),
		"required", []string{"aggregates", "resource_provider_generation"},
		"additionalProperties", false,
	)
	s.aggregates = mustCompileAll(map[mv.Version]*object{
		mv.Aggregates:          list.Clone(),
		mv.AggregateGeneration: withGeneration,
	}, formats())
}

// AggregatesPut is the PUT /resource_providers/{uuid}/aggregates body: a
// bare list of uuids (Aggregates), then an object with aggregates and
// resource_provider_generation (AggregateGeneration). It is nil before
// Aggregates, where the route does not exist.
func (s *Set) AggregatesPut(v mv.Version) *jsonschema.Schema { return s.aggregates.at(v) }
