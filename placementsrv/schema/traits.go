package schema

import "github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"

// Trait schemas (placement/schemas/trait.py).

func (s *Set) addTraits() {
	trait := obj("type", "string", "minLength", 1, "maxLength", 255)
	customTrait := trait.Clone()
	customTrait.Put("pattern", customPattern)
	traitsPut := obj(
		"type", "object",
		"properties", obj(
			"traits", obj("type", "array", "items", customTrait),
		),
		"required", []string{"traits"},
		"additionalProperties", false,
	)
	rpTraits := traitsPut.Clone()
	rpTraits.At("properties", "traits").Put("items", trait.Clone())
	rpTraits.At("properties").Put("resource_provider_generation", obj("type", "integer"))
	rpTraits.AppendRequired("resource_provider_generation")
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
// does (from microversion.Traits); upstream replaces the message with its
// own on failure.
func (s *Set) CustomTrait() *jsonschema.Schema { return s.customTrait }

// ProviderTraitsSet is the PUT /resource_providers/{uuid}/traits body
// (from microversion.Traits).
func (s *Set) ProviderTraitsSet() *jsonschema.Schema { return s.providerTraitsSet }

// TraitListQuery is the GET /traits query: name, associated (from
// microversion.Traits).
func (s *Set) TraitListQuery() *jsonschema.Schema { return s.traitListQuery }
