package placementclient

import (
	"context"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Aggregates is a provider's aggregate uuids (sorted) and, from 1.19, its
// generation (-1 on older servers).
type Aggregates struct {
	Generation int
	Aggregates []string
}

// aggregatesFromGC converts gophercloud's answer: sorted, never nil,
// generation -1 before 1.19.
func aggregatesFromGC(r *resourceproviders.ResourceProviderAggregates) Aggregates {
	out := Aggregates{Generation: -1, Aggregates: slices.Clone(r.Aggregates)}
	if out.Aggregates == nil {
		out.Aggregates = []string{}
	}
	slices.Sort(out.Aggregates)
	if r.ResourceProviderGeneration != nil {
		out.Generation = *r.ResourceProviderGeneration
	}
	return out
}

// GetAggregates reads a provider's aggregates.
func (c *Client) GetAggregates(ctx context.Context, uuid string) (Aggregates, error) {
	return get(ctx, c, "get aggregates of "+uuid, anyVersion, microversion.ErrorCodes, uuid, resourceproviders.GetAggregates, aggregatesFromGC)
}

// PutAggregates replaces a provider's aggregates. From 1.19 the body is
// the envelope with the generation (checked and incremented by the
// server); before, it is the bare list and the generation is not checked.
// It returns the new generation (-1 on servers older than 1.19).
func (c *Client) PutAggregates(ctx context.Context, uuid string, generation int, aggs []string) (int, error) {
	sc, _, err := c.at(ctx, microversion.ErrorCodes)
	if err != nil {
		return 0, err
	}
	if aggs == nil {
		aggs = []string{}
	}
	// gophercloud picks the body shape from sc.Microversion.
	r, err := resourceproviders.UpdateAggregates(ctx, sc, uuid, resourceproviders.UpdateAggregatesOpts{ResourceProviderGeneration: &generation, Aggregates: aggs}).Extract()
	if err != nil {
		return 0, wrapErr("put aggregates of "+uuid, err)
	}
	if r.ResourceProviderGeneration == nil {
		return -1, nil
	}
	return *r.ResourceProviderGeneration, nil
}
