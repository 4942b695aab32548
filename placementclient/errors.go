package placementclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// Sentinel errors; match them with errors.Is on what the client returns.
var (
	// ErrNotFound is a 404 (provider, inventory or class absent).
	ErrNotFound = errors.New("not found")
	// ErrConcurrentUpdate is a 409 placement.concurrent_update: the
	// provider generation moved; re-read and retry.
	ErrConcurrentUpdate = errors.New("concurrent update")
	// ErrInventoryInUse is a 409 placement.inventory.inuse: the write would
	// remove inventory that has allocations.
	ErrInventoryInUse = errors.New("inventory in use")
	// ErrDuplicateName is a 409 placement.duplicate_name.
	ErrDuplicateName = errors.New("duplicate provider name or uuid")
	// ErrProviderInUse is a 409 placement.resource_provider.inuse.
	ErrProviderInUse = errors.New("resource provider in use")
	// ErrCannotDeleteParent is a 409
	// placement.resource_provider.cannot_delete_parent.
	ErrCannotDeleteParent = errors.New("resource provider has children")
	// ErrConflict is any other 409.
	ErrConflict = errors.New("conflict")
	// ErrBadRequest is a 400: the request was wrong, retrying cannot help.
	ErrBadRequest = errors.New("bad request")
	// ErrUnavailable means Placement could not be reached or answered 5xx;
	// retry later.
	ErrUnavailable = errors.New("placement unavailable")
	// ErrUnsupported means the server's microversions do not offer the
	// operation.
	ErrUnsupported = errors.New("not supported by the server's microversions")
)

// Placement's error codes (placement/errors.py), as sent at >= 1.23.
const (
	codeConcurrentUpdate   = "placement.concurrent_update"
	codeInventoryInUse     = "placement.inventory.inuse"
	codeDuplicateName      = "placement.duplicate_name"
	codeProviderInUse      = "placement.resource_provider.inuse"
	codeCannotDeleteParent = "placement.resource_provider.cannot_delete_parent"
)

// Error is a failed Placement call: the operation, the HTTP status (0 for
// a transport failure), Placement's error code and detail.
type Error struct {
	Op     string
	Status int
	Code   string
	Detail string
	kind   error
	cause  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.kind.Error())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.Status)
		if e.Code != "" {
			b.WriteString(", " + e.Code)
		}
		b.WriteString(")")
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	} else if e.cause != nil {
		b.WriteString(": " + e.cause.Error())
	}
	return b.String()
}

// Is matches the sentinel kind.
func (e *Error) Is(target error) bool { return target == e.kind }

// Unwrap returns the underlying transport error, if any.
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether err is worth retrying later: a generation race
// or Placement being unreachable or failing. Context cancellation is not.
func Retryable(err error) bool {
	return errors.Is(err, ErrConcurrentUpdate) || errors.Is(err, ErrUnavailable)
}

// errorBody is Placement's error document.
type errorBody struct {
	Errors []struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// wrapErr turns a gophercloud error into an *Error naming op.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var ure gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ure) {
		return &Error{Op: op, kind: ErrUnavailable, cause: err}
	}
	e := &Error{Op: op, Status: ure.Actual, cause: err}
	var body errorBody
	if json.Unmarshal(ure.Body, &body) == nil && len(body.Errors) > 0 {
		e.Code = body.Errors[0].Code
		e.Detail = strings.Join(strings.Fields(body.Errors[0].Detail), " ")
	}
	e.kind = classify(ure.Actual, e.Code, e.Detail)
	return e
}

// classify maps a status and code to a sentinel. Below 1.23 there is no
// code, so a 409 is told apart by its detail text, as a last resort.
func classify(status int, code, detail string) error {
	switch {
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusBadRequest:
		return ErrBadRequest
	case status >= 500:
		return ErrUnavailable
	case status != http.StatusConflict:
		return fmt.Errorf("unexpected HTTP status %d", status)
	}
	switch code {
	case codeConcurrentUpdate:
		return ErrConcurrentUpdate
	case codeInventoryInUse:
		return ErrInventoryInUse
	case codeDuplicateName:
		return ErrDuplicateName
	case codeProviderInUse:
		return ErrProviderInUse
	case codeCannotDeleteParent:
		return ErrCannotDeleteParent
	}
	lower := strings.ToLower(detail)
	switch {
	case code == "" && strings.Contains(lower, "generation"):
		return ErrConcurrentUpdate
	case code == "" && strings.Contains(lower, "in use"):
		return ErrInventoryInUse
	}
	return ErrConflict
}
