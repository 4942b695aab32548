// Package store declares what the Placement API needs from persistent
// state: record types, sentinel errors and the Store contract that
// handlers use; and, below it, the Backend contract (backend.go) of plain
// rows and transactions that storage implements. It holds no SQL and no
// HTTP. Package ledger implements Store over any Backend; backends live in
// sub-packages (sqlite today).
//
// Every write is atomic: it either applies completely or leaves the store
// as it was. Writes that Placement guards with a generation compare it
// inside the same transaction and fail with ErrConcurrentUpdate when it
// moved.
package store

import (
	"errors"
)

// Sentinel errors. Implementations wrap them in *Error to add detail;
// callers match with errors.Is.
var (
	ErrNotFound           = errors.New("not found")
	ErrConcurrentUpdate   = errors.New("concurrent update")
	ErrDuplicate          = errors.New("duplicate")
	ErrInventoryInUse     = errors.New("inventory in use")
	ErrProviderInUse      = errors.New("resource provider in use")
	ErrCannotDeleteParent = errors.New("cannot delete parent provider")
	ErrInvalid            = errors.New("invalid")
	ErrCapacityExceeded   = errors.New("capacity exceeded")
	ErrResourceClassInUse = errors.New("resource class in use")
	ErrTraitInUse         = errors.New("trait in use")
	ErrStandard           = errors.New("standard name cannot be changed")
)

// Error carries a sentinel Kind and a human-readable detail that handlers
// may show to clients.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string { return e.Detail }

// Unwrap lets errors.Is match the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

// Errorf builds an *Error of the given kind.
func Errorf(kind error, detail string) error { return &Error{Kind: kind, Detail: detail} }

// Detail returns the client-facing detail of err when it is an *Error, or
// err's text otherwise.
func Detail(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Detail
	}
	return err.Error()
}

// Store is the whole contract, composed per resource family so that each
// family's methods are declared next to its record types.
type Store interface {
	ProviderStore
	InventoryStore
	ResourceClassStore
	TraitStore
	AggregateStore
	AllocationStore
	UsageStore
	ReshapeStore
	SnapshotStore
	// Close releases the store.
	Close() error
}
