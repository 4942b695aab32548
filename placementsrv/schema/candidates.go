package schema

// Allocation candidates schemas (placement/schemas/allocation_candidate.py).

func (s *Set) addCandidates() {
	ac := map[int]*object{10: obj(
		"type", "object",
		"properties", obj("resources", obj("type", "string")),
		"required", []string{"resources"},
		"additionalProperties", false,
	)}
	ac[16] = clone(ac[10])
	at(ac[16], "properties").put("limit", obj(
		// Query values are always strings; integer is accepted too.
		"type", []string{"integer", "string"},
		"pattern", "^[1-9][0-9]*$",
		"minimum", 1,
		"minLength", 1,
	))
	ac[17] = clone(ac[16])
	at(ac[17], "properties").put("required", obj("type", []string{"string"}))
	ac[21] = clone(ac[17])
	at(ac[21], "properties").put("member_of", obj("type", []string{"string"}))
	// 1.25 moves resources, required and member_of to numbered groups.
	ac[25] = clone(ac[21])
	at(ac[25], "properties").del("resources")
	ac[25].del("required")
	at(ac[25], "properties").del("required")
	at(ac[25], "properties").del("member_of")
	ac[25].put("patternProperties", groupedStrings(groupPat, "resources", "required", "member_of"))
	at(ac[25], "properties").put("group_policy", obj(
		"type", "string",
		"enum", []string{"none", "isolate"},
	))
	ac[31] = clone(ac[25])
	at(ac[31], "patternProperties").put(grouped(groupPat, "in_tree"), obj("type", "string"))
	// 1.33 allows named groups.
	ac[33] = clone(ac[31])
	ac[33].put("patternProperties", groupedStrings(groupPat133, "resources", "required", "member_of", "in_tree"))
	ac[35] = clone(ac[33])
	at(ac[35], "properties").put("root_required", obj("type", []string{"string"}))
	ac[36] = clone(ac[35])
	at(ac[36], "properties").put("same_subtree", obj("type", []string{"string"}))
	s.candidates = mustCompileAll(ac)
}

// grouped is the pattern of a query parameter with an optional group
// suffix.
func grouped(group, name string) string { return "^" + name + "(" + group + ")?$" }

// groupedStrings is patternProperties admitting each name, with a group
// suffix, as a string.
func groupedStrings(group string, names ...string) *object {
	o := newObject()
	for _, name := range names {
		o.put(grouped(group, name), obj("type", "string"))
	}
	return o
}

// AllocationCandidatesQuery is the GET /allocation_candidates query, with
// variants introduced at 1.10, 1.16, 1.17, 1.21, 1.25, 1.31, 1.33, 1.35 and
// 1.36. It is nil below 1.10.
func (s *Set) AllocationCandidatesQuery(minor int) *Schema { return pick(s.candidates, minor) }
