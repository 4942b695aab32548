package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// Allocation candidates schemas (placement/schemas/allocation_candidate.py).

func (s *Set) addCandidates() {
	ac := map[mv.Version]*object{mv.AllocationCandidates: obj(
		"type", "object",
		"properties", obj("resources", obj("type", "string")),
		"required", []string{"resources"},
		"additionalProperties", false,
	)}
	ac[mv.CandidatesLimit] = ac[mv.AllocationCandidates].Clone()
	ac[mv.CandidatesLimit].At("properties").Put("limit", obj(
		// Query values are always strings; integer is accepted too.
		"type", []string{"integer", "string"},
		"pattern", "^[1-9][0-9]*$",
		"minimum", 1,
		"minLength", 1,
	))
	ac[mv.CandidatesRequired] = ac[mv.CandidatesLimit].Clone()
	ac[mv.CandidatesRequired].At("properties").Put("required", obj("type", []string{"string"}))
	ac[mv.CandidatesMemberOf] = ac[mv.CandidatesRequired].Clone()
	ac[mv.CandidatesMemberOf].At("properties").Put("member_of", obj("type", []string{"string"}))
	// Granular moves resources, required and member_of to numbered groups.
	ac[mv.Granular] = ac[mv.CandidatesMemberOf].Clone()
	ac[mv.Granular].At("properties").Del("resources")
	ac[mv.Granular].Del("required")
	ac[mv.Granular].At("properties").Del("required")
	ac[mv.Granular].At("properties").Del("member_of")
	ac[mv.Granular].Put("patternProperties", groupedStrings(groupPat, "resources", "required", "member_of"))
	ac[mv.Granular].At("properties").Put("group_policy", obj(
		"type", "string",
		"enum", []string{"none", "isolate"},
	))
	ac[mv.CandidatesInTree] = ac[mv.Granular].Clone()
	ac[mv.CandidatesInTree].At("patternProperties").Put(grouped(groupPat, "in_tree"), obj("type", "string"))
	// AnySuffix allows named groups.
	ac[mv.AnySuffix] = ac[mv.CandidatesInTree].Clone()
	ac[mv.AnySuffix].Put("patternProperties", groupedStrings(groupPatNamed, "resources", "required", "member_of", "in_tree"))
	ac[mv.RootRequired] = ac[mv.AnySuffix].Clone()
	ac[mv.RootRequired].At("properties").Put("root_required", obj("type", []string{"string"}))
	ac[mv.SameSubtree] = ac[mv.RootRequired].Clone()
	ac[mv.SameSubtree].At("properties").Put("same_subtree", obj("type", []string{"string"}))
	s.candidates = mustCompileAll(ac, formats())
}

// grouped is the pattern of a query parameter with an optional group
// suffix.
func grouped(group, name string) string { return "^" + name + "(" + group + ")?$" }

// groupedStrings is patternProperties admitting each name, with a group
// suffix, as a string.
func groupedStrings(group string, names ...string) *object {
	o := obj()
	for _, name := range names {
		o.Put(grouped(group, name), obj("type", "string"))
	}
	return o
}

// AllocationCandidatesQuery is the GET /allocation_candidates query
// (AllocationCandidates), with limit (CandidatesLimit), required
// (CandidatesRequired), member_of (CandidatesMemberOf), numbered groups
// and group_policy (Granular), in_tree (CandidatesInTree), named groups
// (AnySuffix), root_required (RootRequired) and same_subtree
// (SameSubtree). It is nil before AllocationCandidates.
func (s *Set) AllocationCandidatesQuery(v mv.Version) *jsonschema.Schema { return s.candidates.at(v) }
