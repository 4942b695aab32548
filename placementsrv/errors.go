package placementsrv

import (
	"errors"
	"fmt"
	"net/http"
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

// httpError is a handler's answer that is not a success. It renders as
// Placement's error JSON; Detail is the condition-specific text that upstream
// appends to the status' standard explanation.
type httpError struct {
	Status  int
	Detail  string
	Code    string
	Headers http.Header
	// Raw, when set, is the whole detail (no standard explanation), as for
	// the 405 and 406 bodies upstream builds from custom templates.
	Raw bool
}

func (e *httpError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Detail) }

// errorf builds an httpError with the default code.
func errorf(status int, format string, args ...any) *httpError {
	return &httpError{Status: status, Detail: fmt.Sprintf(format, args...), Code: CodeDefault}
}

// codedf builds an httpError with a specific Placement error code.
func codedf(status int, code, format string, args ...any) *httpError {
	return &httpError{Status: status, Detail: fmt.Sprintf(format, args...), Code: code}
}

func badRequest(format string, args ...any) *httpError {
	return errorf(http.StatusBadRequest, format, args...)
}

func notFound(format string, args ...any) *httpError {
	return errorf(http.StatusNotFound, format, args...)
}

func conflict(code, format string, args ...any) *httpError {
	return codedf(http.StatusConflict, code, format, args...)
}

// asHTTPError returns err as an *httpError when it is one.
func asHTTPError(err error) (*httpError, bool) {
	var he *httpError
	if errors.As(err, &he) {
		return he, true
	}
	return nil, false
}

// explanations are webob's standard texts per status, whitespace-normalized
// as webob does at import time; upstream's error detail starts with them.
var explanations = map[int]string{
	400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	401: "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.",
	403: "Access was denied to this resource.",
	404: "The resource could not be found.",
	405: "",
	406: "",
	409: "There was a conflict when trying to complete your request.",
	415: "",
	500: "The server has either erred or is incapable of performing the requested operation.",
}

// errorTitle is the HTTP reason phrase webob uses as the title.
func errorTitle(status int) string {
	switch status {
	case 406:
		return "Not Acceptable"
	case 415:
		return "Unsupported Media Type"
	}
	t := http.StatusText(status)
	if t == "" {
		return "Unknown"
	}
	return t
}
