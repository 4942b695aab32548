package placementclient

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Placement microversion, always 1.x in practice.
type Version struct{ Major, Minor int }

// Microversions the client asks for, each named after what it brought.
var (
	// V1_0 is the base API.
	V1_0 = Version{1, 0}
	// V1_5 added DELETE /resource_providers/{uuid}/inventories.
	V1_5 = Version{1, 5}
	// V1_7 made PUT /resource_classes/{name} an idempotent create.
	V1_7 = Version{1, 7}
	// NestedProviders (1.14) added parent_provider_uuid, root_provider_uuid
	// and the in_tree filter.
	NestedProviders = Version{1, 14}
	// AggregateGeneration (1.19) wraps aggregates in an envelope carrying
	// the provider generation, checked on PUT.
	AggregateGeneration = Version{1, 19}
	// CreateReturnsBody (1.20): POST /resource_providers answers 200 with
	// the provider; before it, 201 with no body.
	CreateReturnsBody = Version{1, 20}
	// ErrorCodes (1.23) added errors[].code, which tells a generation race
	// from an inventory in use.
	ErrorCodes = Version{1, 23}
	// ReservedEqualsTotal (1.26) accepts reserved == total, which is how an
	// unavailable resource is reported without deleting it.
	ReservedEqualsTotal = Version{1, 26}
	// Latest is the highest microversion this client knows (Placement 8.0.0).
	Latest = Version{1, 39}
)

// ParseVersion parses "X.Y".
func ParseVersion(s string) (Version, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return Version{}, fmt.Errorf("invalid microversion %q", s)
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return Version{}, fmt.Errorf("invalid microversion %q", s)
	}
	return Version{x, y}, nil
}

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	return v.Minor < o.Minor
}

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool { return !v.Less(o) }
