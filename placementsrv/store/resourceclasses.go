package store

import "time"

// MinCustomResourceClassID is the first id given to a custom class, as in
// Placement; standard classes take their index in the standard list.
const MinCustomResourceClassID = 10000

// ResourceClass is a standard or custom (CUSTOM_*) resource class.
type ResourceClass struct {
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ResourceClassStore manages resource classes. Standard classes cannot be
// changed or deleted (ErrStandard).
type ResourceClassStore interface {
	ListResourceClasses(ctx Ctx) ([]ResourceClass, error)
	GetResourceClass(ctx Ctx, name string) (ResourceClass, error)
	// CreateResourceClass fails with ErrDuplicate when it exists.
	CreateResourceClass(ctx Ctx, name string) (ResourceClass, error)
	// EnsureResourceClass creates the class when missing and reports
	// whether it did.
	EnsureResourceClass(ctx Ctx, name string) (ResourceClass, bool, error)
	// RenameResourceClass changes a custom class's name.
	RenameResourceClass(ctx Ctx, name, newName string) (ResourceClass, error)
	// DeleteResourceClass fails with ErrResourceClassInUse when any
	// inventory uses it.
	DeleteResourceClass(ctx Ctx, name string) error
}
