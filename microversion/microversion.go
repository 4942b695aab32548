// Package microversion is the one vocabulary of Placement API
// microversions shared by the server, the client and the tools: the
// Version type, its parser, comparison, the range this project speaks
// (Min to Max) and the version at which each behaviour appeared. It is a
// leaf: it imports only the standard library, so that any layer may name
// a microversion without depending on another.
//
// The server's reading of the OpenStack-API-Version header is not here:
// it must fail exactly as upstream's Python does, error text included,
// so it stays with the server's negotiation (placementsrv/middleware).
package microversion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a Placement API microversion, always of the form 1.N.
type Version struct {
	Major, Minor int
}

// The range this project speaks, server and client alike.
var (
	// Min is the base API, what a request without a version header gets.
	Min = Version{1, 0}
	// Max is the highest microversion, that of Placement 8.0.0 (no later
	// release added one): the server's default cap, the client's highest
	// and the tools' default.
	Max = AnyTraits
)

// The versions at which behaviour changed, one constant per change; the
// comment says what the version added.
var (
	Aggregates           = Version{1, 1}  // GET/PUT /resource_providers/{u}/aggregates
	ResourceClasses      = Version{1, 2}  // /resource_classes
	MemberOf             = Version{1, 3}  // member_of on GET /resource_providers
	ResourcesQuery       = Version{1, 4}  // resources on GET /resource_providers
	DeleteAllInventories = Version{1, 5}  // DELETE /resource_providers/{u}/inventories
	Traits               = Version{1, 6}  // /traits and provider traits
	ResourceClassPut     = Version{1, 7}  // PUT /resource_classes/{name} is a bodiless create
	AllocationsProjUser  = Version{1, 8}  // project_id and user_id required on PUT /allocations
	Usages               = Version{1, 9}  // GET /usages
	AllocationCandidates = Version{1, 10} // GET /allocation_candidates
	AllocationsLink      = Version{1, 11} // "allocations" link on providers
	AllocationsDict      = Version{1, 12} // dict form of PUT/GET /allocations/{c}
	AllocationsPost      = Version{1, 13} // POST /allocations
	Nested               = Version{1, 14} // parent/root provider uuids, in_tree
	CacheHeaders         = Version{1, 15} // Last-Modified and Cache-Control
	CandidatesLimit      = Version{1, 16} // limit on allocation candidates
	CandidatesRequired   = Version{1, 17} // required on allocation candidates
	ProvidersRequired    = Version{1, 18} // required on GET /resource_providers
	AggregateGeneration  = Version{1, 19} // provider generation in aggregates API
	ProviderPostBody     = Version{1, 20} // POST /resource_providers returns 200 with body
	CandidatesMemberOf   = Version{1, 21} // member_of on allocation candidates
	ForbiddenTraits      = Version{1, 22} // !TRAIT in required
	ErrorCodes           = Version{1, 23} // "code" in error bodies
	MultiMemberOf        = Version{1, 24} // repeated member_of
	Granular             = Version{1, 25} // numbered request groups
	ReservedEqualTotal   = Version{1, 26} // inventory with reserved == total
	CandidatesAllClasses = Version{1, 27} // all inventories in provider_summaries
	ConsumerGeneration   = Version{1, 28} // consumer generations
	CandidatesNested     = Version{1, 29} // nested providers in allocation candidates
	Reshaper             = Version{1, 30} // POST /reshaper
	CandidatesInTree     = Version{1, 31} // in_tree on allocation candidates
	ForbiddenAggregates  = Version{1, 32} // !member_of
	AnySuffix            = Version{1, 33} // request group suffixes [A-Za-z0-9_-]{1,64}
	Mappings             = Version{1, 34} // mappings in allocation requests and allocations
	RootRequired         = Version{1, 35} // root_required
	SameSubtree          = Version{1, 36} // same_subtree and resourceless groups
	Reparent             = Version{1, 37} // re-parenting and un-parenting providers
	ConsumerTypes        = Version{1, 38} // consumer_type
	AnyTraits            = Version{1, 39} // required=in:A,B
)

// ErrMalformed is returned by Parse for text that is not a version.
var ErrMalformed = errors.New("malformed microversion")

// Parse reads "X.Y", two unsigned decimal numbers with nothing around
// them. Use it for versions this project reads from configuration, flags
// and version documents; a request's header goes through the server's
// negotiation instead, which answers malformed text as upstream does.
func Parse(s string) (Version, error) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return Version{}, fmt.Errorf("%w: %q", ErrMalformed, s)
	}
	x, err1 := strconv.Atoi(maj)
	y, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || x < 0 || y < 0 || strings.HasPrefix(maj, "+") || strings.HasPrefix(min, "+") {
		return Version{}, fmt.Errorf("%w: %q", ErrMalformed, s)
	}
	return Version{x, y}, nil
}

// String renders "X.Y".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v >= o.
func (v Version) AtLeast(o Version) bool {
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	return v.Minor >= o.Minor
}

// Less reports whether v < o.
func (v Version) Less(o Version) bool { return !v.AtLeast(o) }

// Supported reports whether v is within [Min, Max].
func (v Version) Supported() bool { return v.AtLeast(Min) && Max.AtLeast(v) }
