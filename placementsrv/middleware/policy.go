package middleware

import (
	"fmt"
	"net/http"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
)

// Authorize checks rule (policy.RPList, ...: upstream's names, the same
// in every release, which a 403 shows) for the request's credentials
// against Placement's default target, the caller's own project and user.
func (r *Request) Authorize(rule string) error {
	t := policy.DefaultTarget(&r.Creds)
	return r.AuthorizeTarget(rule, &t)
}

// AuthorizeTarget checks rule against an explicit target. A scope
// mismatch (enforce_scope) is a 403 whose detail is the bare rule name,
// as upstream turns InvalidScope into PolicyNotAuthorized(rule).
func (r *Request) AuthorizeTarget(rule string, t *policy.Target) error {
	switch r.chain.opts.Policy.Enforce(rule, &r.Creds, t) {
	case policy.Allowed:
		return nil
	case policy.ScopeDenied:
		return &apierror.Error{Status: http.StatusForbidden, Code: apierror.CodeDefault, Detail: rule}
	case policy.Denied:
		return &apierror.Error{Status: http.StatusForbidden, Code: apierror.CodeDefault, Detail: "Policy does not allow " + rule + " to be performed."}
	}
	return fmt.Errorf("policy rule %q is not registered", rule)
}
