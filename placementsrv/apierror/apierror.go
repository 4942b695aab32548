// Package apierror holds the Placement API's error answers: an HTTP
// status, the condition's detail and one of Placement's error codes
// (placement/errors.py). Handlers and query parsers return them; the
// middleware renders them, in one place.
//
// The package does not import net/http: the read model's package parses
// queries with it, and the store contract that names the read model must
// stay free of HTTP.
package apierror

import (
	"errors"
	"fmt"
)

// Placement's error codes, one per condition (placement/errors.py). They
// appear in error bodies from microversion 1.23.
const (
	CodeDefault              = "placement.undefined_code"
	CodeInventoryInUse       = "placement.inventory.inuse"
	CodeConcurrentUpdate     = "placement.concurrent_update"
	CodeDuplicateName        = "placement.duplicate_name"
	CodeProviderInUse        = "placement.resource_provider.inuse"
	CodeProviderCannotDelete = "placement.resource_provider.cannot_delete_parent"
	CodeProviderNotFound     = "placement.resource_provider.not_found"
	CodeQueryDuplicateKey    = "placement.query.duplicate_key"
	CodeQueryBadValue        = "placement.query.bad_value"
	CodeQueryMissingValue    = "placement.query.missing_value"
)

// The statuses the constructors below use.
const (
	statusBadRequest = 400
	statusNotFound   = 404
	statusConflict   = 409
)

// Error is an answer that is not a success. It renders as Placement's
// error JSON; Detail is the condition-specific text that upstream appends
// to the status' standard explanation.
type Error struct {
	Status int
	Detail string
	Code   string
	// Raw, when set, is the whole detail (no standard explanation), as for
	// the 405 and 406 bodies upstream builds from custom templates.
	Raw bool
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Detail) }

// Errorf builds an Error with the default code.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...), Code: CodeDefault}
}

// Codedf builds an Error with a specific Placement error code.
func Codedf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...), Code: code}
}

// BadRequest is a 400 with the default code.
func BadRequest(format string, args ...any) *Error {
	return Errorf(statusBadRequest, format, args...)
}

// NotFound is a 404 with the default code.
func NotFound(format string, args ...any) *Error {
	return Errorf(statusNotFound, format, args...)
}

// Conflict is a 409 with the given code.
func Conflict(code, format string, args ...any) *Error {
	return Codedf(statusConflict, code, format, args...)
}

// As returns err as an *Error when it is one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
