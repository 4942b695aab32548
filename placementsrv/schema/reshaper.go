package schema

// Reshaper schemas (placement/schemas/reshaper.py): inventories per
// provider plus POST /allocations-style allocations that may be empty.

func (s *Set) addReshaper() {
	inventories := inventoriesReplaceBody()
	_, post := allocationBodies()
	reshape := make(map[int]*object, 3)
	// Each form takes the POST /allocations form current at its minor.
	for minor, postMinor := range map[int]int{30: 28, 34: 34, 38: 38} {
		allocations := clone(post[postMinor])
		allocations.put("minProperties", 0)
		reshape[minor] = obj(
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
	s.reshaper = mustCompileAll(reshape)
}

// ReshaperPost is the POST /reshaper body: 1.30, with 1.34 and 1.38
// allocation forms. It is nil below 1.30.
func (s *Set) ReshaperPost(minor int) *Schema { return pick(s.reshaper, minor) }
