package schema

// Trait schemas (placement/schemas/trait.py).

func (s *Set) addTraits() {
	trait := obj("type", "string", "minLength", 1, "maxLength", 255)
	customTrait := clone(trait)
	customTrait.put("pattern", customPattern)
	traitsPut := obj(
		"type", "object",
		"properties", obj(
			"traits", obj("type", "array", "items", customTrait),
		),
		"required", []string{"traits"},
		"additionalProperties", false,
	)
	rpTraits := clone(traitsPut)
	at(rpTraits, "properties", "traits").put("items", clone(trait))
	at(rpTraits, "properties").put("resource_provider_generation", obj("type", "integer"))
	appendRequired(rpTraits, "resource_provider_generation")
	traitList := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string"),
			"associated", obj("type", "string"),
		),
		"additionalProperties", false,
	)
	s.customTrait, s.traitsPut = mustCompile(customTrait), mustCompile(traitsPut)
	s.providerTraitsSet, s.traitListQuery = mustCompile(rpTraits), mustCompile(traitList)
}

// CustomTrait validates a bare trait name string, as PUT /traits/{name}
// (1.6+) does; upstream replaces the message with its own on failure.
func (s *Set) CustomTrait() *Schema { return s.customTrait }

// ProviderTraitsSet is the PUT /resource_providers/{uuid}/traits body (1.6+).
func (s *Set) ProviderTraitsSet() *Schema { return s.providerTraitsSet }

// TraitListQuery is the GET /traits query (name, associated) (1.6+).
func (s *Set) TraitListQuery() *Schema { return s.traitListQuery }
