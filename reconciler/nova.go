package reconciler

import (
	"context"
	"slices"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// NovaSource reads the Nova state the reconciler mirrors (a
// novaclient.Source, or a test's own).
type NovaSource interface {
	// State returns every host aggregate and every compute node. An
	// error (wrapping novaclient.ErrUnavailable) means Nova could not be
	// read; nothing is written then.
	State(ctx context.Context) (novaclient.State, error)
}

// ComputeSource lists the nova-compute services the gate must count
// (novaclient's compute API, file or cell databases), already filtered
// as Nova's minimum-version query filters them. An error means the list
// is unknown.
type ComputeSource interface {
	Computes(ctx context.Context) ([]novaclient.ComputeService, error)
}

// nodesByHost maps each service host to its compute node uuids, sorted.
func nodesByHost(s novaclient.State) map[string][]string {
	m := make(map[string][]string)
	for _, n := range s.Nodes {
		if n.Host == "" || n.UUID == "" {
			continue
		}
		m[n.Host] = append(m[n.Host], n.UUID)
	}
	for h := range m {
		slices.Sort(m[h])
		m[h] = slices.Compact(m[h])
	}
	return m
}

// aggregateUUIDs returns the uuids of Nova's aggregates.
func aggregateUUIDs(s novaclient.State) []string {
	out := make([]string, 0, len(s.Aggregates))
	for _, a := range s.Aggregates {
		if a.UUID != "" {
			out = append(out, a.UUID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
