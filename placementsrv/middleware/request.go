package middleware

import (
	"net/http"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/uuid4"
)

// Request carries one HTTP request and what the middleware learnt about
// it; handlers read it.
type Request struct {
	*http.Request
	// ID is the request id, sent back in x-openstack-request-id.
	ID string
	// Version is the negotiated microversion, once Negotiated.
	Version    microversion.Version
	Negotiated bool
	// Route is the template of the matched route and Params its path
	// parameters, set by the router.
	Route  string
	Params map[string]string
	// Creds are the caller's policy credentials, from authentication.
	Creds policy.Credentials
	// errCode is the Placement error code of an error answer.
	errCode string
	// chain is the middleware serving the request: its policy,
	// microversion cap and logger.
	chain *Chain
}

// Param returns a path parameter by its route name.
func (r *Request) Param(name string) string { return r.Params[name] }

// At reports whether the negotiated microversion is at least v.
func (r *Request) At(v microversion.Version) bool { return r.Version.AtLeast(v) }

func newRequestID() string { return uuid4.NewWithPrefix("req-") }
