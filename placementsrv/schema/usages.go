package schema

// Usage schemas (placement/schemas/usage.py).

func (s *Set) addUsages() {
	usages := map[int]*object{9: obj(
		"type", "object",
		"properties", obj(
			"project_id", idString(),
			"user_id", idString(),
		),
		"required", []string{"project_id"},
		"additionalProperties", false,
	)}
	usages[38] = clone(usages[9])
	at(usages[38], "properties").put("consumer_type", consumerType(consumerTypeGetPattern))
	s.usages = mustCompileAll(usages)
}

// UsagesQuery is the GET /usages query: project_id, user_id (1.9), and
// consumer_type (1.38). It is nil below 1.9.
func (s *Set) UsagesQuery(minor int) *Schema { return pick(s.usages, minor) }
