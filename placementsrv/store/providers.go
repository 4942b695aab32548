package store

import "time"

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

// ProviderFilter selects providers; zero fields do not filter.
type ProviderFilter struct {
	Name   string
	UUID   string
	InTree string // providers in the same tree as this provider
	// MemberOf is a conjunction of disjunctions of aggregate uuids.
	MemberOf [][]string
	// NotMemberOf lists aggregates none of which a provider may be in.
	NotMemberOf []string
	// Resources maps resource class to an amount the provider must be
	// able to allocate now (capacity, min/max unit and step size).
	Resources map[string]int64
	// Required is a conjunction of disjunctions of trait names.
	Required [][]string
	// Forbidden lists traits a provider must not have.
	Forbidden []string
}

// ProviderStore manages providers.
type ProviderStore interface {
	CreateProvider(ctx Ctx, p NewProvider) (Provider, error)
	GetProvider(ctx Ctx, uuid string) (Provider, error)
	ListProviders(ctx Ctx, f ProviderFilter) ([]Provider, error)
	UpdateProvider(ctx Ctx, uuid string, u ProviderUpdate) (Provider, error)
	DeleteProvider(ctx Ctx, uuid string) error
}
