package placementclient

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"
)

// Usages is what is allocated against a provider, per class, and the
// provider's generation.
type Usages struct {
	Generation int
	Usages     map[string]int
}

// GetUsages reads a provider's usages.
func (c *Client) GetUsages(ctx context.Context, uuid string) (Usages, error) {
	sc, _, err := c.at(ctx, ErrorCodes)
	if err != nil {
		return Usages{}, err
	}
	r, err := resourceproviders.GetUsages(ctx, sc, uuid).Extract()
	if err != nil {
		return Usages{}, wrapErr("get usages of "+uuid, err)
	}
	if r.Usages == nil {
		r.Usages = map[string]int{}
	}
	return Usages{Generation: r.ResourceProviderGeneration, Usages: r.Usages}, nil
}

// Allocations is the allocations against a provider by consumer.
type Allocations struct {
	Generation  int
	Allocations map[string]map[string]int // consumer -> class -> amount
}

// GetProviderAllocations reads the allocations against a provider.
func (c *Client) GetProviderAllocations(ctx context.Context, uuid string) (Allocations, error) {
	sc, _, err := c.at(ctx, ErrorCodes)
	if err != nil {
		return Allocations{}, err
	}
	r, err := resourceproviders.GetAllocations(ctx, sc, uuid).Extract()
	if err != nil {
		return Allocations{}, wrapErr("get allocations of "+uuid, err)
	}
	out := Allocations{Generation: r.ResourceProviderGeneration, Allocations: make(map[string]map[string]int, len(r.Allocations))}
	for consumer, a := range r.Allocations {
		out.Allocations[consumer] = a.Resources
	}
	return out, nil
}
