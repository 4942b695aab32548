package novaclient

import (
	"context"
	"errors"
)

// ErrUnavailable wraps every failure to read Nova, so that callers (the
// CLI's exit code) can tell it from Placement failures.
var ErrUnavailable = errors.New("nova unavailable")

// Source is Nova reached as a whole: the compute API (API) or a file of
// its answers (File). Each reads Nova's state, its compute list and the
// records that hold allocations.
type Source interface {
	State(ctx context.Context) (State, error)
	ComputeLister
	Records(ctx context.Context) (Records, error)
}

// ComputeLister lists the nova-compute services a version check must
// count, already filtered as Nova's minimum-version query filters them
// (not deleted, not forced down). An error means the list is unknown.
type ComputeLister interface {
	Computes(ctx context.Context) ([]ComputeService, error)
}

// State is what Nova says: aggregates with their member hosts, and
// compute nodes with the host whose nova-compute service runs them.
type State struct {
	Aggregates []Aggregate
	Nodes      []ComputeNode
}

// Aggregate is a Nova host aggregate. UUID is only returned by Nova at
// compute microversion >= 2.41.
type Aggregate struct {
	UUID  string
	Name  string
	Hosts []string
	// Metadata is the aggregate's metadata: availability_zone (its
	// zone), filter_tenant_id* (tenant isolation) and the operator's.
	Metadata map[string]string
}

// ComputeNode is a Nova hypervisor at microversion >= 2.53: its ID is the
// compute node uuid, which is also its resource provider uuid, and Host
// is the service host. An Ironic host has one per node.
type ComputeNode struct {
	UUID     string
	Hostname string
	Host     string
}
