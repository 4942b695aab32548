package store

import "time"

// Trait is a standard or custom (CUSTOM_*) trait.
type Trait struct {
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TraitFilter selects traits; zero fields do not filter.
type TraitFilter struct {
	NamePrefix string   // startswith:
	NameIn     []string // in:
	// Associated, when non-nil, keeps only traits that are (or are not)
	// on some provider.
	Associated *bool
}

// TraitStore manages traits and provider traits.
type TraitStore interface {
	ListTraits(ctx Ctx, f TraitFilter) ([]Trait, error)
	GetTrait(ctx Ctx, name string) (Trait, error)
	// EnsureTrait creates a custom trait when missing, reporting whether
	// it did.
	EnsureTrait(ctx Ctx, name string) (Trait, bool, error)
	// DeleteTrait fails with ErrStandard or ErrTraitInUse.
	DeleteTrait(ctx Ctx, name string) error
	// MissingTraits returns the names that are not known traits.
	MissingTraits(ctx Ctx, names []string) ([]string, error)
	ProviderTraits(ctx Ctx, uuid string) (Provider, []string, error)
	// SetProviderTraits replaces the provider's traits, generation-checked.
	SetProviderTraits(ctx Ctx, uuid string, generation int64, traits []string) (Provider, []string, error)
	// DeleteProviderTraits removes all the provider's traits.
	DeleteProviderTraits(ctx Ctx, uuid string) error
}
