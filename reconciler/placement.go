package reconciler

import (
	"context"
	"errors"
)

// Placement is the part of the Placement API the reconciler uses, at
// microversion >= 1.22 (1.19: aggregate generations; 1.22: forbidden
// traits in listings). Implementations must return errors matching
// ErrProviderNotFound for 404 and placementclient.ErrConcurrentUpdate for
// a 409 generation conflict.
type Placement interface {
	// Providers lists the providers matching q.
	Providers(ctx context.Context, q ProviderQuery) ([]Provider, error)
	// Aggregates returns a provider's aggregate uuids and generation.
	Aggregates(ctx context.Context, provider string) (Membership, error)
	// SetAggregates replaces a provider's aggregates if its generation is
	// still generation, returning the new generation.
	SetAggregates(ctx context.Context, provider string, aggregates []string, generation int64) (int64, error)
	// Traits returns a provider's traits and generation.
	Traits(ctx context.Context, provider string) (Membership, error)
	// SetTraits replaces a provider's traits if its generation is still
	// generation, returning the new generation.
	SetTraits(ctx context.Context, provider string, traits []string, generation int64) (int64, error)
}

// Sentinel errors a Placement implementation wraps.
var (
	ErrProviderNotFound = errors.New("resource provider not found")
	// ErrUnavailable marks a transient failure (unreachable, 5xx): the
	// write is retried a bounded number of times after re-reading, since
	// it may or may not have been applied.
	ErrUnavailable = errors.New("placement unavailable")
)

// ProviderQuery filters GET /resource_providers. Empty fields are left
// out.
type ProviderQuery struct {
	// MemberOf is one member_of value: an aggregate uuid, or "in:" and
	// comma-separated uuids (callers keep those lists short; see
	// maxUUIDsPerQuery).
	MemberOf string
	// Required is one required value, e.g. "COMPUTE_NODE,!OWNER_NOVA".
	Required string
}

// Provider is a resource provider as listed.
type Provider struct {
	UUID       string
	Name       string
	ParentUUID string
	RootUUID   string
	Generation int64
}

// Membership is a provider's set of aggregates or traits with the
// provider generation it was read at.
type Membership struct {
	Items      []string
	Generation int64
}

// maxUUIDsPerQuery bounds the uuids put in one member_of=in: value. A
// uuid costs 39 bytes of URL (36 and an encoded comma). uWSGI's
// http-socket, a common way to serve Placement (and the reference
// serve.sh), copies the request into a 4 KiB buffer by default, with the
// query string twice (REQUEST_URI and QUERY_STRING) beside the headers.
// Measured against Placement 8.0.0 there: up to 46 uuids work; 47-50 and
// more than 93 get the connection closed without an answer; 51-93 are
// worse, the query string is dropped silently and every provider is
// listed. Nova's chunk of 200 (LP#2068893) assumes Apache's 8 KiB line.
// 32 uuids (about 1.2 KiB) leave room for a Keystone token and the
// other headers.
const maxUUIDsPerQuery = 32

// chunks splits uuids into slices of at most n.
func chunks(uuids []string, n int) [][]string {
	var out [][]string
	for len(uuids) > n {
		out = append(out, uuids[:n:n])
		uuids = uuids[n:]
	}
	if len(uuids) > 0 {
		out = append(out, uuids)
	}
	return out
}
