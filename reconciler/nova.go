package reconciler

import (
	"context"
	"errors"
	"slices"
)

// NovaSource reads the Nova state the reconciler mirrors.
type NovaSource interface {
	// NovaState returns every host aggregate and every compute node.
	// An error means Nova could not be read; nothing is written then.
	NovaState(ctx context.Context) (NovaState, error)
}

// ErrNovaUnavailable wraps every failure to read Nova, so that callers
// (the CLI's exit code) can tell it from Placement failures.
var ErrNovaUnavailable = errors.New("nova unavailable")

// NovaState is what Nova says: aggregates with their member hosts, and
// compute nodes with the host whose nova-compute service runs them.
type NovaState struct {
	Aggregates []NovaAggregate
	Nodes      []ComputeNode
}

// NovaAggregate is a Nova host aggregate. UUID is only returned by Nova
// at compute microversion >= 2.41.
type NovaAggregate struct {
	UUID  string
	Name  string
	Hosts []string
}

// ComputeNode is a Nova hypervisor at microversion >= 2.53: its ID is the
// compute node uuid, which is also its resource provider uuid, and Host
// is the service host. An Ironic host has one per node.
type ComputeNode struct {
	UUID     string
	Hostname string
	Host     string
}

// nodesByHost maps each service host to its compute node uuids, sorted.
func (s NovaState) nodesByHost() map[string][]string {
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
func (s NovaState) aggregateUUIDs() []string {
	out := make([]string, 0, len(s.Aggregates))
	for _, a := range s.Aggregates {
		if a.UUID != "" {
			out = append(out, a.UUID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
