package store

import (
	"context"
	"time"
)

// Trait is a standard or custom (CUSTOM_*) trait.
type Trait struct {
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TraitFilter selects traits; zero fields do not filter.
type TraitFilter struct {
	// NamePrefix keeps names matching the SQL pattern NamePrefix+"%", as
	// Placement's LIKE filter does: ASCII case-insensitive, with "_" and
	// "%" acting as wildcards.
	NamePrefix string
	// NameIn, when non-nil, keeps only these exact names (an empty
	// non-nil list keeps none).
	NameIn []string
	// Associated, when non-nil, keeps only traits that are (or are not)
	// on some provider.
	Associated *bool
}

// TraitStore manages traits and provider traits.
type TraitStore interface {
	// ListTraits returns the matching traits in Placement's order:
	// creation (id) order, or name order when NameIn is set.
	ListTraits(ctx context.Context, f TraitFilter) ([]Trait, error)
	// GetTrait fails with ErrNotFound ("No such trait(s): NAME.").
	GetTrait(ctx context.Context, name string) (Trait, error)
	// EnsureTrait creates a trait when missing, reporting whether it did.
	// Callers validate the name (custom traits only).
	EnsureTrait(ctx context.Context, name string) (Trait, bool, error)
	// DeleteTrait fails with ErrNotFound, ErrStandard (a name without the
	// CUSTOM_ prefix) or ErrTraitInUse, checked in that order.
	DeleteTrait(ctx context.Context, name string) error
	// ProviderTraits returns the provider and its traits in trait id order.
	ProviderTraits(ctx context.Context, uuid string) (Provider, []Trait, error)
	// SetProviderTraits replaces the provider's traits. It fails with
	// ErrNotFound for an unknown provider, ErrConcurrentUpdate when
	// generation is not the provider's, and ErrInvalid ("No such trait
	// ...") for unknown traits, checked in that order. The generation is
	// incremented only when the set changes. The traits returned are the
	// requested ones, deduplicated and sorted by name.
	SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (Provider, []Trait, error)
	// DeleteProviderTraits removes all the provider's traits without a
	// generation check; the generation is incremented when there were any.
	DeleteProviderTraits(ctx context.Context, uuid string) error
}
