package store

import (
	"context"
	"errors"
	"time"
)

// Provider is a resource provider.
type Provider struct {
	UUID       string
	Name       string
	Generation int64
	// ParentUUID is empty for a root; RootUUID equals UUID for a root.
	ParentUUID string
	RootUUID   string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// NewProvider describes a provider to create.
type NewProvider struct {
	UUID       string
	Name       string
	ParentUUID string // empty for a root
}

// ProviderUpdate changes a provider's name and, optionally, its parent.
type ProviderUpdate struct {
	Name string
	// ParentUUID is nil when the request did not mention a parent; a
	// pointer to "" un-parents (allowed with AllowReparent only).
	ParentUUID *string
	// AllowReparent permits moving a provider that already has a parent
	// and un-parenting (microversion 1.37).
	AllowReparent bool
}

// ResourceAmount is an amount of one resource class.
type ResourceAmount struct {
	Class  string
	Amount int64
}

// ProviderFilter selects providers; zero fields do not filter. Unknown
// aggregates simply match nothing; an unknown trait or resource class is
// an error of kind ErrUnknownTrait or ErrUnknownResourceClass. As upstream,
// filters are considered in a fixed order (in_tree, required, forbidden,
// member_of, resources) and a filter that no provider at all can satisfy
// ends the search with an empty result before later filters are checked.
type ProviderFilter struct {
	Name   string
	UUID   string
	InTree string // providers in the same tree as this provider
	// MemberOf is a conjunction of disjunctions of aggregate uuids.
	MemberOf [][]string
	// NotMemberOf lists aggregates none of which a provider may be in.
	NotMemberOf []string
	// Resources lists, in request order, amounts the provider must be
	// able to allocate now: free capacity, min/max unit and step size.
	Resources []ResourceAmount
	// Required is a conjunction of disjunctions of trait names.
	Required [][]string
	// Forbidden lists traits a provider must not have.
	Forbidden []string
}

// Errors of ListProviders for names that do not exist; the detail is
// upstream's ("No such trait(s): X." / "No such resource class X.").
var (
	ErrUnknownTrait         = errors.New("unknown trait")
	ErrUnknownResourceClass = errors.New("unknown resource class")
)

// ProviderStore manages providers.
type ProviderStore interface {
	// CreateProvider creates a provider at generation 0. Errors:
	// ErrDuplicate (uuid checked before name), ErrInvalid with upstream's
	// "Object action create failed because: ..." detail.
	CreateProvider(ctx context.Context, p NewProvider) (Provider, error)
	GetProvider(ctx context.Context, uuid string) (Provider, error)
	// ListProviders returns the matching providers ordered by creation.
	ListProviders(ctx context.Context, f ProviderFilter) ([]Provider, error)
	// UpdateProvider renames and re-parents; it does not change the
	// generation. Errors: ErrNotFound, ErrInvalid ("Object action ...
	// failed because: ..."), ErrDuplicate for a name in use.
	UpdateProvider(ctx context.Context, uuid string, u ProviderUpdate) (Provider, error)
	// DeleteProvider removes a provider with its inventories, traits and
	// aggregate memberships. Errors: ErrNotFound, ErrCannotDeleteParent,
	// ErrProviderInUse (it has allocations).
	DeleteProvider(ctx context.Context, uuid string) error
}
