package placementclient

import (
	"context"
	"errors"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Provider is a resource provider as Placement reports it.
type Provider struct {
	UUID       string
	Name       string
	Generation int
	// ParentUUID and RootUUID are empty on servers older than 1.14.
	ParentUUID string
	RootUUID   string
}

func fromGC(p resourceproviders.ResourceProvider) Provider {
	return Provider{UUID: p.UUID, Name: p.Name, Generation: p.Generation, ParentUUID: p.ParentProviderUUID, RootUUID: p.RootProviderUUID}
}

// ListFilter narrows ListProviders; empty fields do not filter.
type ListFilter struct {
	Name   string
	UUID   string
	InTree string // needs 1.14
	// MemberOf is one member_of value: an aggregate uuid, or "in:" and
	// comma-separated uuids (needs 1.3; keep lists short, URLs have limits).
	MemberOf string
	// Required is one required value: comma-separated trait names, "!"
	// before a name forbidding it (needs 1.18; "!" needs 1.22).
	Required string
}

// ListProviders lists providers matching f.
func (c *Client) ListProviders(ctx context.Context, f ListFilter) ([]Provider, error) {
	const op = "list resource providers"
	need := microversion.Min
	if f.InTree != "" {
		need = microversion.Nested
	}
	if f.Required != "" && need.Less(microversion.ProvidersRequired) {
		need = microversion.ProvidersRequired
	}
	if strings.Contains(f.Required, "!") {
		need = microversion.ForbiddenTraits
	}
	sc, _, err := c.atLeast(ctx, op, need, microversion.ErrorCodes)
	if err != nil {
		return nil, err
	}
	opts := resourceproviders.ListOpts{Name: f.Name, UUID: f.UUID, InTree: f.InTree, MemberOf: f.MemberOf, Required: f.Required}
	page, err := resourceproviders.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	rps, err := resourceproviders.ExtractResourceProviders(page)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	out := make([]Provider, len(rps))
	for i, p := range rps {
		out[i] = fromGC(p)
	}
	return out, nil
}

// GetProvider returns one provider; ErrNotFound if there is none.
func (c *Client) GetProvider(ctx context.Context, uuid string) (Provider, error) {
	return get(ctx, c, "get resource provider "+uuid, anyVersion, microversion.ErrorCodes, uuid, resourceproviders.Get,
		func(p *resourceproviders.ResourceProvider) Provider { return fromGC(*p) })
}

// NewProvider describes a provider to create.
type NewProvider struct {
	UUID       string
	Name       string
	ParentUUID string // needs 1.14
}

// CreateProvider creates a provider and returns it (generation 0).
// Servers older than 1.20 answer 201 with no body, which gophercloud's
// Create rejects, so there the POST is raw and followed by a GET.
func (c *Client) CreateProvider(ctx context.Context, np NewProvider) (Provider, error) {
	op := "create resource provider " + np.Name
	need := microversion.Min
	if np.ParentUUID != "" {
		need = microversion.Nested
	}
	// 1.23 rather than 1.20, so that a 409 carries its error code.
	sc, v, err := c.atLeast(ctx, op, need, microversion.ErrorCodes)
	if err != nil {
		return Provider{}, err
	}
	opts := resourceproviders.CreateOpts{Name: np.Name, UUID: np.UUID, ParentProviderUUID: np.ParentUUID}
	if v.AtLeast(microversion.ProviderPostBody) {
		p, err := resourceproviders.Create(ctx, sc, opts).Extract()
		if err != nil {
			return Provider{}, wrapErr(op, err)
		}
		return fromGC(*p), nil
	}
	body, err := opts.ToResourceProviderCreateMap()
	if err != nil {
		return Provider{}, err
	}
	if _, err := sc.Post(ctx, sc.ServiceURL("resource_providers"), body, nil, &gophercloud.RequestOpts{OkCodes: []int{201}}); err != nil {
		return Provider{}, wrapErr(op, err)
	}
	if np.UUID == "" {
		ps, err := c.ListProviders(ctx, ListFilter{Name: np.Name})
		if err != nil {
			return Provider{}, err
		}
		if len(ps) != 1 {
			return Provider{}, &Error{Op: op, kind: ErrNotFound, Detail: "created provider not found by name"}
		}
		return ps[0], nil
	}
	return c.GetProvider(ctx, np.UUID)
}

// DeleteProvider deletes a provider.
func (c *Client) DeleteProvider(ctx context.Context, uuid string) error {
	return send(ctx, c, "delete resource provider "+uuid, anyVersion, microversion.ErrorCodes, uuid, resourceproviders.Delete)
}

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
