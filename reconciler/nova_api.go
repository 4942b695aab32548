package reconciler

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// NovaMicroversion is the compute API microversion the reconciler asks
// for: 2.41 added aggregate uuids and 2.53 made hypervisor ids the
// compute node (and resource provider) uuids.
const NovaMicroversion = "2.53"

// NovaAPI reads Nova's state through the compute API.
type NovaAPI struct {
	client *gophercloud.ServiceClient
}

// NewNovaAPI wraps a compute client; it works on a copy pinned to
// NovaMicroversion, so the caller's client is left as it was.
func NewNovaAPI(client *gophercloud.ServiceClient) *NovaAPI {
	c := *client
	c.Microversion = NovaMicroversion
	if c.Type == "" {
		// Without a type gophercloud sends no microversion header at all.
		c.Type = "compute"
	}
	return &NovaAPI{client: &c}
}

// NovaState implements NovaSource: all aggregates, then every page of
// hypervisors.
func (n *NovaAPI) NovaState(ctx context.Context) (NovaState, error) {
	var aggs []novaAggregateJSON
	err := aggregates.List(n.client).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []novaAggregateJSON
		if err := p.(aggregates.AggregatesPage).ExtractIntoSlicePtr(&page, "aggregates"); err != nil {
			return false, err
		}
		aggs = append(aggs, page...)
		return true, nil
	})
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: list aggregates: %w", ErrNovaUnavailable, err)
	}
	var hvs []novaHypervisorJSON
	err = hypervisors.List(n.client, hypervisors.ListOpts{}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []novaHypervisorJSON
		if err := p.(hypervisors.HypervisorPage).ExtractIntoSlicePtr(&page, "hypervisors"); err != nil {
			return false, err
		}
		hvs = append(hvs, page...)
		return true, nil
	})
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: list hypervisors: %w", ErrNovaUnavailable, err)
	}
	st, err := novaStateFromJSON(aggs, hvs)
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: %w", ErrNovaUnavailable, err)
	}
	return st, nil
}
