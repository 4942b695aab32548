package placementclient

import (
	"context"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceclasses"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/traits"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Traits is a provider's trait set (sorted) and its generation.
type Traits struct {
	Generation int
	Traits     []string
}

// traitsFromGC converts gophercloud's answer, sorted.
func traitsFromGC(r *resourceproviders.ResourceProviderTraits) Traits {
	t := slices.Clone(r.Traits)
	slices.Sort(t)
	return Traits{Generation: r.ResourceProviderGeneration, Traits: t}
}

// GetTraits reads a provider's traits.
func (c *Client) GetTraits(ctx context.Context, uuid string) (Traits, error) {
	return get(ctx, c, "get traits of "+uuid, microversion.Traits, microversion.ErrorCodes, uuid, resourceproviders.GetTraits, traitsFromGC)
}

// PutTraits replaces a provider's traits, checked against generation, and
// returns the new generation. Every trait must exist (EnsureTrait).
func (c *Client) PutTraits(ctx context.Context, uuid string, generation int, names []string) (int, error) {
	op := "put traits of " + uuid
	sc, _, err := c.atLeast(ctx, op, microversion.Traits, microversion.ErrorCodes)
	if err != nil {
		return 0, err
	}
	if names == nil {
		names = []string{}
	}
	r, err := resourceproviders.UpdateTraits(ctx, sc, uuid, resourceproviders.UpdateTraitsOpts{ResourceProviderGeneration: generation, Traits: names}).Extract()
	if err != nil {
		return 0, wrapErr(op, err)
	}
	return r.ResourceProviderGeneration, nil
}

// EnsureTrait creates a custom trait if it does not exist (idempotent).
func (c *Client) EnsureTrait(ctx context.Context, name string) error {
	return send(ctx, c, "ensure trait "+name, microversion.Traits, microversion.ErrorCodes, name, traits.Create)
}

// EnsureResourceClass creates a custom resource class if it does not exist
// (idempotent PUT, 1.7).
func (c *Client) EnsureResourceClass(ctx context.Context, name string) error {
	return send(ctx, c, "ensure resource class "+name, microversion.ResourceClassPut, microversion.ErrorCodes, name, resourceclasses.Update)
}
