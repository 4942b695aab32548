package placementclient

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Usages is what is allocated against a provider, per class, and the
// provider's generation.
type Usages struct {
	Generation int
	Usages     map[string]int
}

// usagesFromGC converts gophercloud's answer; no usages is an empty map.
func usagesFromGC(r *resourceproviders.ResourceProviderUsage) Usages {
	if r.Usages == nil {
		r.Usages = map[string]int{}
	}
	return Usages{Generation: r.ResourceProviderGeneration, Usages: r.Usages}
}

// GetUsages reads a provider's usages.
func (c *Client) GetUsages(ctx context.Context, uuid string) (Usages, error) {
	return get(ctx, c, "get usages of "+uuid, anyVersion, microversion.ErrorCodes, uuid, resourceproviders.GetUsages, usagesFromGC)
}

// Allocations is the allocations against a provider by consumer.
type Allocations struct {
	Generation  int
	Allocations map[string]map[string]int // consumer -> class -> amount
}

// allocationsFromGC converts gophercloud's answer.
func allocationsFromGC(r *resourceproviders.ResourceProviderAllocations) Allocations {
	out := Allocations{Generation: r.ResourceProviderGeneration, Allocations: make(map[string]map[string]int, len(r.Allocations))}
	for consumer, a := range r.Allocations {
		out.Allocations[consumer] = a.Resources
	}
	return out
}

// getProviderAllocations reads the allocations against a provider (the
// tests' check of a claim; export_test.go).
func (c *Client) getProviderAllocations(ctx context.Context, uuid string) (Allocations, error) {
	return get(ctx, c, "get allocations of "+uuid, anyVersion, microversion.ErrorCodes, uuid, resourceproviders.GetAllocations, allocationsFromGC)
}
