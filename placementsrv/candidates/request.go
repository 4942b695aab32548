// Package candidates is the home of allocation candidates: it parses a
// GET /allocation_candidates query into a Request (parse.go), resolves it
// against the read model (prepare.go), searches (search.go, emit.go,
// finish.go) and renders the answer, provider summaries included, in
// chunks when it is large (render*.go). The read model it searches,
// Snapshot, is package readmodel's, which the store side builds and patches
// without knowing the engine.
//
// The semantics are OpenStack Placement 8.0.0's: request groups
// (unsuffixed and suffixed), required / forbidden / any-of traits,
// member_of, in_tree, group_policy, same_subtree, root_required, nested
// and sharing providers, limit and provider summaries.
//
// Placement builds each group's candidates independently, multiplies them
// per anchor tree and filters the products. Find walks the same space per
// anchor root, but depth-first with pruning: a group without options ends
// the anchor, a capacity, isolation or tree violation ends the branch, a
// branch that produced nothing is not retried on an interchangeable
// sibling provider, and generation stops as soon as the answer is
// complete (limit without randomization, or MaxCandidates).
//
// The package does not import net/http: the store contract names
// Snapshot and must stay free of HTTP.
package candidates

import (
	"math/rand/v2"
)

// Resource is one requested amount of a class.
type Resource struct {
	Class  string
	Amount int64
}

// Group is one request group. Suffix "" is the unsuffixed group, whose
// resources may come from several providers of a tree and sharing
// providers; any other suffix names a granular group satisfied by one
// provider.
type Group struct {
	Suffix    string
	Resources []Resource
	// Required is a conjunction of disjunctions of trait names.
	Required [][]string
	// Forbidden lists traits no provider of the group may have.
	Forbidden []string
	// MemberOf is a conjunction of disjunctions of aggregate uuids.
	MemberOf [][]string
	// ForbiddenAggs lists aggregates the group's providers may not be in.
	ForbiddenAggs []string
	// InTree is a provider uuid whose tree must satisfy the group, or "".
	InTree string
}

// Group policies.
const (
	PolicyNone    = "none"
	PolicyIsolate = "isolate"
)

// Request is a whole GET /allocation_candidates query.
type Request struct {
	// Groups in the order their first parameter appeared.
	Groups      []Group
	GroupPolicy string // "", PolicyNone or PolicyIsolate
	// Limit caps the number of candidates returned (0: no limit).
	Limit int
	// RootRequired and RootForbidden filter the anchor (root) providers.
	RootRequired  []string
	RootForbidden []string
	// SameSubtree lists sets of group suffixes whose providers must all
	// sit under one of them.
	SameSubtree [][]string
}

// Order is Placement 15.0.0's allocation_candidates_generation_strategy:
// the order candidates are generated (and, without randomization,
// returned) in, which decides what a cap or a limit keeps.
type Order int

const (
	// DepthFirst exhausts one root's candidates before the next root.
	DepthFirst Order = iota
	// BreadthFirst takes the next product of the groups' options from
	// each root in turn, so a cap or limit spreads over the roots.
	BreadthFirst
)

// ParseOrder reads an order by its configuration name: "depth-first" (or
// ""), "breadth-first" or its alias "round-robin"; false for any other.
func ParseOrder(name string) (Order, bool) {
	switch name {
	case "", "depth-first":
		return DepthFirst, true
	case "breadth-first", "round-robin":
		return BreadthFirst, true
	}
	return 0, false
}

// Options are the server-side settings and microversion-dependent
// behaviour of Find.
type Options struct {
	// NestedAware is microversion >= 1.29: below it, when any provider
	// has a parent, candidates taking resources from two providers of the
	// same tree are dropped and summaries list only providers used.
	NestedAware bool
	// Randomize picks a random sample when limiting and shuffles
	// otherwise (Placement's randomize_allocation_candidates).
	Randomize bool
	// MaxCandidates stops generation after this many distinct candidates
	// (0: no cap); limit and randomization apply to what was generated.
	// With a cap, roots and granular groups' options are visited in
	// Placement's order, so that the cap keeps what Placement keeps.
	MaxCandidates int
	Order         Order
	// WideTrees is Placement 15.0.0's optimize_for_wide_provider_trees. It
	// changes answers there, and so here: the amounts several groups take
	// from one inventory are checked against its capacity without its
	// usage, and breadth-first steps count only the products that pass
	// that check.
	WideTrees bool
	// Rand is the randomness source; nil uses math/rand/v2's global one.
	Rand *rand.Rand
	// Owners, when set, keeps the sharing-provider anchor order of
	// unsuffixed groups across requests on one snapshot (see OwnerCache).
	Owners *OwnerCache
}

// Alloc is an amount of one class from one provider (snapshot indexes).
type Alloc struct {
	Provider int32
	Class    int32
	Amount   int64
}

// Candidate is one allocation request.
type Candidate struct {
	// Allocs sorted by provider index, then class.
	Allocs []Alloc
	// Mappings has one entry per Request.Groups element: the providers
	// that satisfied that group, ascending.
	Mappings [][]int32
}

// Result is Find's answer.
type Result struct {
	Candidates []Candidate
	// Summaries lists the providers to summarize, roots in ascending
	// order, each followed by its tree in preorder.
	Summaries []int32
}

// NotFoundError reports a resource class or trait the snapshot does not
// know.
type NotFoundError struct {
	Class bool // a resource class; otherwise a trait
	Name  string
}

func (e *NotFoundError) Error() string {
	if e.Class {
		return "No such resource class " + e.Name + "."
	}
	return "No such trait(s): " + e.Name + "."
}
