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
	return missing(err, "%s", store.Detail(err))
}

// providerNotFound is the plain 404 of a missing provider.
func providerNotFound(err error, uuid string) error {
	return missing(err, "No resource provider with uuid %s found", uuid)
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
