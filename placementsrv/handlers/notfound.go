package handlers

import (
	"errors"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// The 404s below differ in wording only, each as the upstream handler
// words it; other errors pass through them unchanged.

// missing turns a store miss into a 404 whose detail is format filled
// with args.
func missing(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierror.NotFound(format, args...)
	}
	return err
}

// storeNotFound is the 404 upstream's wrapper makes of a NotFound
// exception: the store's own words.
func storeNotFound(err error) error {
	return escape(missing(err, "%s", store.Detail(err)))
}

// providerNotFound is the plain 404 of a missing provider (upstream's
// NotFound exception, escaping the handler).
func providerNotFound(err error, uuid string) error {
	return escape(missing(err, "No resource provider with uuid %s found", uuid))
}

// escapedError marks an error that upstream raises past its handler's
// wsgify wrapper: an object's NotFound exception, which the outer
// dispatcher turns into the 404. The microversion middleware adds
// "Vary: openstack-api-version" only to responses the handler returned,
// so these go out without it.
type escapedError struct{ err error }

func (e *escapedError) Error() string { return e.err.Error() }
func (e *escapedError) Unwrap() error { return e.err }

func escape(err error) error {
	if _, ok := apierror.As(err); ok {
		return &escapedError{err}
	}
	return err
}

// handled undoes escape for the handlers that catch the NotFound
// exception and raise their own 404 with its words.
func handled(err error) error {
	var esc *escapedError
	if errors.As(err, &esc) {
		return esc.err
	}
	return err
}

// Escaped reports whether err reaches the client without passing through
// the handler's own response: a NotFound exception (see escapedError) or
// a policy refusal (upstream's PolicyNotAuthorized, always turned into
// the 403 outside the handler).
func Escaped(err error) bool {
	var esc *escapedError
	if errors.As(err, &esc) {
		return true
	}
	e, ok := apierror.As(err)
	return ok && e.Status == 403
}

// providerNotFoundTwice is the 404 of the GET handlers, which repeat the
// store's message after their own, joined by sep.
func providerNotFoundTwice(sep string) func(err error, uuid string) error {
	return func(err error, uuid string) error {
		return missing(err, "No resource provider with uuid %s found%s %s", uuid, sep, store.Detail(err))
	}
}

// allocationsProviderNotFound is the 404 of a provider's allocations.
func allocationsProviderNotFound(err error, uuid string) error {
	return missing(err, "Resource provider '%s' not found: %s", uuid, store.Detail(err))
}

// traitsProviderNotFound is the 404 of a provider's traits: upstream
// appends the exception's own text to its message.
func traitsProviderNotFound(err error, uuid string) error {
	msg := "No resource provider with uuid " + uuid + " found"
	return missing(err, "%s: %s", msg, msg)
}
