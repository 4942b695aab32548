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
	aggs, err := allPages[novaAggregateJSON](ctx, aggregates.List(n.client), "aggregates")
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: list aggregates: %w", ErrNovaUnavailable, err)
	}
	hvs, err := allPages[novaHypervisorJSON](ctx, hypervisors.List(n.client, hypervisors.ListOpts{}), "hypervisors")
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: list hypervisors: %w", ErrNovaUnavailable, err)
	}
	st, err := novaStateFromJSON(aggs, hvs)
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: %w", ErrNovaUnavailable, err)
	}
	return st, nil
}

// allPages reads every page of a Nova list, decoding the items under key
// as T, in order.
func allPages[T any](ctx context.Context, pager pagination.Pager, key string) ([]T, error) {
	var all []T
	err := pager.EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []T
		if err := p.(interface {
			ExtractIntoSlicePtr(to any, label string) error
		}).ExtractIntoSlicePtr(&page, key); err != nil {
			return false, err
		}
		all = append(all, page...)
		return true, nil
	})
	return all, err
}
