package schema

// Allocation schemas (placement/schemas/allocation.py).

func (s *Set) addAllocations() {
	put, post := allocationBodies()
	s.allocationsPut, s.allocationsPost = mustCompileAll(put), mustCompileAll(post)
}

// allocationBodies returns the PUT /allocations/{consumer_uuid} and POST
// /allocations body schemas keyed by the minor that introduced them.
func allocationBodies() (put, post map[int]*object) {
	put = map[int]*object{0: allocationListBody()}
	put[8] = clone(put[0])
	at(put[8], "properties").put("project_id", idString())
	at(put[8], "properties").put("user_id", idString())
	appendRequired(put[8], "project_id", "user_id")
	put[12] = allocationDictBody()
	// Allocations may be emptied (to delete them) in the POST and later PUT forms.
	deletable := clone(put[12])
	at(deletable, "properties", "allocations").put("minProperties", 0)
	put[28] = clone(deletable)
	at(put[28], "properties").put("consumer_generation",
		obj("type", []string{"integer", "null"}, "additionalProperties", false))
	appendRequired(put[28], "consumer_generation")
	put[34] = clone(put[28])
	at(put[34], "properties").put("mappings", obj(
		"type", "object",
		"minProperties", 1,
		"patternProperties", obj(groupPat133, obj(
			"type", "array",
			"minItems", 1,
			"items", uuidString(),
		)),
	))
	put[38] = clone(put[34])
	at(put[38], "properties").put("consumer_type", consumerType(consumerTypePattern))
	appendRequired(put[38], "consumer_type")
	post = map[int]*object{
		13: byConsumer(deletable),
		28: byConsumer(clone(put[28])),
		34: byConsumer(put[34]),
		38: byConsumer(put[38]),
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

// allocationDictBody is the 1.12 form: allocations keyed by provider uuid.
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
// allocations (1.0), plus project_id/user_id (1.8), keyed by provider
// (1.12), with consumer_generation and possibly empty allocations (1.28),
// mappings (1.34), consumer_type (1.38).
func (s *Set) AllocationsPut(minor int) *Schema { return pick(s.allocationsPut, minor) }

// AllocationsPost is the POST /allocations body, keyed by consumer: 1.13,
// consumer_generation required (1.28), mappings (1.34), consumer_type
// (1.38). It is nil below 1.13, where the route does not exist.
func (s *Set) AllocationsPost(minor int) *Schema { return pick(s.allocationsPost, minor) }
