package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// Reshaper schemas (placement/schemas/reshaper.py): inventories per
// provider plus POST /allocations-style allocations that may be empty.

func (s *Set) addReshaper() {
	inventories := inventoriesReplaceBody()
	_, post := allocationBodies()
	reshape := make(map[mv.Version]*object, 3)
	// Each form takes the POST /allocations form current at its version.
	for v, postAt := range map[mv.Version]mv.Version{
		mv.Reshaper:      mv.ConsumerGeneration,
		mv.Mappings:      mv.Mappings,
		mv.ConsumerTypes: mv.ConsumerTypes,
	} {
		allocations := post[postAt].Clone()
		allocations.Put("minProperties", 0)
		reshape[v] = obj(
			"type", "object",
			"properties", obj(
				"inventories", obj(
					"type", "object",
					"patternProperties", obj(uuidPattern, inventories),
					"minProperties", 1,
					"additionalProperties", false,
				),
				"allocations", allocations,
			),
			"required", []string{"inventories", "allocations"},
			"additionalProperties", false,
		)
	}
	s.reshaper = mustCompileAll(reshape, formats())
}

// ReshaperPost is the POST /reshaper body (Reshaper), with the Mappings
// and ConsumerTypes allocation forms. It is nil before Reshaper.
func (s *Set) ReshaperPost(v mv.Version) *jsonschema.Schema { return s.reshaper.at(v) }
