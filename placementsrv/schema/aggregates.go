package schema

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
			"aggregates", clone(list),
			"resource_provider_generation", obj("type", "integer"),
		),
		"required", []string{"aggregates", "resource_provider_generation"},
		"additionalProperties", false,
	)
	s.aggregates, s.aggregates19 = mustCompile(clone(list)), mustCompile(withGeneration)
}

// AggregatesPut is the PUT /resource_providers/{uuid}/aggregates body: a
// bare list of uuids before 1.19, then an object with aggregates and
// resource_provider_generation.
func (s *Set) AggregatesPut(minor int) *Schema {
	if minor >= 19 {
		return s.aggregates19
	}
	return s.aggregates
}
