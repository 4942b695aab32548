package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// Allocation schemas (placement/schemas/allocation.py).

func (s *Set) addAllocations() {
	put, post := allocationBodies()
	s.allocationsPut, s.allocationsPost = mustCompileAll(put, formats()), mustCompileAll(post, formats())
}

// allocationBodies returns the PUT /allocations/{consumer_uuid} and POST
// /allocations body schemas keyed by the microversion that introduced
// them.
func allocationBodies() (put, post map[mv.Version]*object) {
	put = map[mv.Version]*object{mv.Min: allocationListBody()}
	put[mv.AllocationsProjUser] = put[mv.Min].Clone()
	put[mv.AllocationsProjUser].At("properties").Put("project_id", idString())
	put[mv.AllocationsProjUser].At("properties").Put("user_id", idString())
	put[mv.AllocationsProjUser].AppendRequired("project_id", "user_id")
	put[mv.AllocationsDict] = allocationDictBody()
	// Allocations may be emptied (to delete them) in the POST and later PUT forms.
	deletable := put[mv.AllocationsDict].Clone()
	deletable.At("properties", "allocations").Put("minProperties", 0)
	put[mv.ConsumerGeneration] = deletable.Clone()
	put[mv.ConsumerGeneration].At("properties").Put("consumer_generation",
		obj("type", []string{"integer", "null"}, "additionalProperties", false))
	put[mv.ConsumerGeneration].AppendRequired("consumer_generation")
	put[mv.Mappings] = put[mv.ConsumerGeneration].Clone()
	put[mv.Mappings].At("properties").Put("mappings", obj(
		"type", "object",
		"minProperties", 1,
		"patternProperties", obj(groupPatNamed, obj(
			"type", "array",
			"minItems", 1,
			"items", uuidString(),
		)),
	))
	put[mv.ConsumerTypes] = put[mv.Mappings].Clone()
	put[mv.ConsumerTypes].At("properties").Put("consumer_type", consumerType(consumerTypePattern))
	put[mv.ConsumerTypes].AppendRequired("consumer_type")
	post = map[mv.Version]*object{
		mv.AllocationsPost:    byConsumer(deletable),
		mv.ConsumerGeneration: byConsumer(put[mv.ConsumerGeneration].Clone()),
		mv.Mappings:           byConsumer(put[mv.Mappings]),
		mv.ConsumerTypes:      byConsumer(put[mv.ConsumerTypes]),
	}
	return put, post
}

// allocationListBody is the 1.0 form: a list of allocations, each naming
// its provider.
func allocationListBody() *object {
	return obj(
		"type", "object",
		"properties", obj(
			"allocations", obj(
				"type", "array",
				"minItems", 1,
				"items", obj(
					"type", "object",
					"properties", obj(
						"resource_provider", obj(
							"type", "object",
							"properties", obj("uuid", uuidString()),
							"additionalProperties", false,
							"required", []string{"uuid"},
						),
						"resources", allocationResources(),
					),
					"required", []string{"resource_provider", "resources"},
					"additionalProperties", false,
				),
			),
		),
		"required", []string{"allocations"},
		"additionalProperties", false,
	)
}

// allocationDictBody is the AllocationsDict form: allocations keyed by provider uuid.
func allocationDictBody() *object {
	return obj(
		"type", "object",
		"properties", obj(
			"allocations", obj(
				"type", "object",
				"minProperties", 1,
				"patternProperties", obj(uuidPattern, obj(
					"type", "object",
					"properties", obj(
						"generation", obj("type", "integer"),
						"resources", allocationResources(),
					),
					"required", []string{"resources"},
					"additionalProperties", false,
				)),
				"additionalProperties", false,
			),
			"project_id", idString(),
			"user_id", idString(),
		),
		"additionalProperties", false,
		"required", []string{"allocations", "project_id", "user_id"},
	)
}

// allocationResources is the amounts allocated per resource class.
func allocationResources() *object {
	return obj(
		"type", "object",
		"minProperties", 1,
		"patternProperties", obj(rcPattern, obj("type", "integer", "minimum", 1)),
		"additionalProperties", false,
	)
}

// byConsumer is the POST /allocations body: one PUT-like body per
// consumer uuid.
func byConsumer(body *object) *object {
	return obj(
		"type", "object",
		"minProperties", 1,
		"additionalProperties", false,
		"patternProperties", obj(uuidPattern, body),
	)
}

// AllocationsPut is the PUT /allocations/{consumer_uuid} body: a list of
// allocations (1.0), plus project_id/user_id (AllocationsProjUser), keyed
// by provider (AllocationsDict), with consumer_generation and possibly
// empty allocations (ConsumerGeneration), mappings (Mappings),
// consumer_type (ConsumerTypes).
func (s *Set) AllocationsPut(v mv.Version) *jsonschema.Schema { return s.allocationsPut.at(v) }

// AllocationsPost is the POST /allocations body, keyed by consumer
// (AllocationsPost), consumer_generation required (ConsumerGeneration),
// mappings (Mappings), consumer_type (ConsumerTypes). It is nil before
// AllocationsPost, where the route does not exist.
func (s *Set) AllocationsPost(v mv.Version) *jsonschema.Schema { return s.allocationsPost.at(v) }
