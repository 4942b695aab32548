package reconciler

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"
)

// PlacementMicroversion is the Placement microversion the reconciler
// speaks: 1.19 added generations to aggregate writes and 1.22 forbidden
// traits (required=!OWNER_NOVA) in provider listings.
const PlacementMicroversion = "1.22"

// placementAPI implements Placement with gophercloud.
type placementAPI struct {
	client *gophercloud.ServiceClient
}

// NewPlacementAPI wraps a Placement client; it works on a copy pinned to
// PlacementMicroversion.
func NewPlacementAPI(client *gophercloud.ServiceClient) Placement {
	c := *client
	c.Microversion = PlacementMicroversion
	// Without a type gophercloud sends no microversion header, and
	// Placement then answers as 1.0.
	c.Type = "placement"
	return &placementAPI{client: &c}
}

func (p *placementAPI) Providers(ctx context.Context, q ProviderQuery) ([]Provider, error) {
	pages, err := resourceproviders.List(p.client, resourceproviders.ListOpts{MemberOf: q.MemberOf, Required: q.Required}).AllPages(ctx)
	if err != nil {
		return nil, placementErr("list resource providers", err)
	}
	rps, err := resourceproviders.ExtractResourceProviders(pages)
	if err != nil {
		return nil, fmt.Errorf("decode resource providers: %w", err)
	}
	out := make([]Provider, len(rps))
	for i, rp := range rps {
		out[i] = Provider{UUID: rp.UUID, Name: rp.Name, ParentUUID: rp.ParentProviderUUID, RootUUID: rp.RootProviderUUID, Generation: int64(rp.Generation)}
	}
	return out, nil
}

func (p *placementAPI) Aggregates(ctx context.Context, provider string) (Membership, error) {
	r, err := resourceproviders.GetAggregates(ctx, p.client, provider).Extract()
	if err != nil {
		return Membership{}, placementErr("get aggregates of provider "+provider, err)
	}
	if r.ResourceProviderGeneration == nil {
		return Membership{}, fmt.Errorf("get aggregates of provider %s: no generation in the answer", provider)
	}
	return Membership{Items: r.Aggregates, Generation: int64(*r.ResourceProviderGeneration)}, nil
}

func (p *placementAPI) SetAggregates(ctx context.Context, provider string, aggregates []string, generation int64) (int64, error) {
	gen := int(generation)
	if aggregates == nil {
		aggregates = []string{}
	}
	r, err := resourceproviders.UpdateAggregates(ctx, p.client, provider, resourceproviders.UpdateAggregatesOpts{
		Aggregates: aggregates, ResourceProviderGeneration: &gen,
	}).Extract()
	if err != nil {
		return 0, placementErr("set aggregates of provider "+provider, err)
	}
	if r.ResourceProviderGeneration == nil {
		return 0, fmt.Errorf("set aggregates of provider %s: no generation in the answer", provider)
	}
	return int64(*r.ResourceProviderGeneration), nil
}

func (p *placementAPI) Traits(ctx context.Context, provider string) (Membership, error) {
	r, err := resourceproviders.GetTraits(ctx, p.client, provider).Extract()
	if err != nil {
		return Membership{}, placementErr("get traits of provider "+provider, err)
	}
	return Membership{Items: r.Traits, Generation: int64(r.ResourceProviderGeneration)}, nil
}

func (p *placementAPI) SetTraits(ctx context.Context, provider string, traits []string, generation int64) (int64, error) {
	if traits == nil {
		traits = []string{}
	}
	r, err := resourceproviders.UpdateTraits(ctx, p.client, provider, resourceproviders.UpdateTraitsOpts{
		Traits: traits, ResourceProviderGeneration: int(generation),
	}).Extract()
	if err != nil {
		return 0, placementErr("set traits of provider "+provider, err)
	}
	return int64(r.ResourceProviderGeneration), nil
}

// placementErr wraps err with op, adding the sentinel for 404 and 409.
func placementErr(op string, err error) error {
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return fmt.Errorf("%s: %w: %w", op, ErrProviderNotFound, err)
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return fmt.Errorf("%s: %w: %w", op, ErrGenerationConflict, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
