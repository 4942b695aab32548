package store

import (
	"context"
	"fmt"
	"time"
)

// MinCustomResourceClassID is the first id given to a custom class, as in
// Placement; standard classes take their index in the standard list.
const MinCustomResourceClassID = 10000

// ErrResourceClassNotFound is the kind for an unknown resource class name;
// it is also an ErrNotFound. Its detail is Placement's
// "No such resource class NAME.".
var ErrResourceClassNotFound = fmt.Errorf("resource class %w", ErrNotFound)

// ResourceClass is a standard or custom (CUSTOM_*) resource class.
type ResourceClass struct {
	Name      string
	Standard  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ResourceClassStore manages resource classes. Standard classes cannot be
// changed or deleted (ErrStandard).
type ResourceClassStore interface {
	// ListResourceClasses returns every class, standard ones first in
	// their standard order, then custom ones by creation.
	ListResourceClasses(ctx context.Context) ([]ResourceClass, error)
	GetResourceClass(ctx context.Context, name string) (ResourceClass, error)
	// CreateResourceClass fails with ErrDuplicate when it exists.
	CreateResourceClass(ctx context.Context, name string) (ResourceClass, error)
	// EnsureResourceClass creates the class when missing and reports
	// whether it did.
	EnsureResourceClass(ctx context.Context, name string) (ResourceClass, bool, error)
	// RenameResourceClass changes a custom class's name; ErrStandard for
	// a standard class, ErrDuplicate when newName is taken.
	RenameResourceClass(ctx context.Context, name, newName string) (ResourceClass, error)
	// DeleteResourceClass fails with ErrResourceClassInUse when any
	// inventory uses it and ErrStandard for a standard class.
	DeleteResourceClass(ctx context.Context, name string) error
}
