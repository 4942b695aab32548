// Package middleware is the Placement API's HTTP plumbing, in front of the
// route table: request ids, the request log and HTTP metrics, CORS, auth
// (noauth2 or Keystone) and the policy hook, microversion negotiation and
// the Content-Length guard. It also defines what handlers see and return
// (Request, Response) and the one writer of answers: WriteResponse for
// successes, WriteError for Placement's (and webob's) error bodies.
package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Options configures the chain; Validate checks them and fills in the
// defaults.
type Options struct {
	// Logger receives one line per request; nil means no logging.
	Logger *zap.Logger
	// Auth is the auth strategy: "noauth2" (the default) or "keystone".
	Auth string
	// Tokens validates Keystone tokens; required with Auth "keystone".
	Tokens TokenValidator
	// WWWAuthenticateURI is announced in a 401's WWW-Authenticate header
	// with Auth "keystone" (Keystone's public endpoint).
	WWWAuthenticateURI string
	// MaxMicroversion caps the microversions offered (the zero value:
	// microversion.Max).
	MaxMicroversion microversion.Version
	// Policy is the compiled policy; nil means Placement's defaults in
	// legacy mode (no scope checks, deprecated rules OR'ed in).
	Policy *policy.Enforcer
	// CORS enables cross-origin resource sharing; nil means off.
	CORS *CORSOptions
	// Release chooses the default policy when Policy is nil.
	Release release.Release
	// Metrics instruments the requests; nil means not instrumented.
	Metrics *Metrics
}

// Validate checks the auth strategy and the microversion cap, and fills
// in the defaults: noauth2, microversion.Max, Placement's default policy.
// Calling it again does nothing more.
func (o *Options) Validate() error {
	switch o.Auth {
	case "", "noauth2":
		o.Auth = "noauth2"
	case "keystone":
		if o.Tokens == nil {
			return errors.New("the keystone auth strategy needs a token validator")
		}
	default:
		return fmt.Errorf("unsupported auth strategy %q", o.Auth)
	}
	if o.MaxMicroversion == (microversion.Version{}) {
		o.MaxMicroversion = microversion.Max
	}
	if v := o.MaxMicroversion; !v.Supported() {
		return fmt.Errorf("MaxMicroversion %s is outside %s–%s", v, microversion.Min, microversion.Max)
	}
	if o.Policy == nil {
		p, err := policy.New(policy.Options{Release: o.Release})
		if err != nil {
			return fmt.Errorf("default policy: %w", err)
		}
		o.Policy = p
	}
	return nil
}

// Router answers the requests the middleware lets through.
type Router interface {
	// Dispatch finds the request's route, sets Request.Route and
	// Request.Params, and answers.
	Dispatch(w http.ResponseWriter, r *Request)
	// Route returns the template of the route path matches, or "" (for
	// requests stopped before dispatch, which are counted by route too).
	Route(path string) string
}

// Chain is the middleware in front of a Router. It is safe for
// concurrent use.
type Chain struct {
	opts Options
	log  *zap.Logger
	cors *cors
	next Router
}

// New builds the chain in front of next; opts must have passed Validate.
func New(opts Options, next Router) *Chain {
	c := &Chain{opts: opts, log: opts.Logger, cors: newCORS(opts.CORS), next: next}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	return c
}

// statusRecorder remembers the status for the request log line.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// ServeHTTP runs the middleware, outermost first: request id, log and
// metrics, CORS, auth, microversion negotiation and the Content-Length
// guard, then the router.
func (c *Chain) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	req := &Request{Request: hr, ID: newRequestID(), chain: c}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("x-openstack-request-id", req.ID)
	c.requestStarted()
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("panic serving request", zap.Any("panic", p), zap.String("request_id", req.ID))
			WriteError(rec, req, apierror.Errorf(http.StatusInternalServerError, "An unexpected error occurred."))
		}
		c.logRequest(req, rec.status, time.Since(start))
		c.requestDone(req, rec.status, time.Since(start))
	}()
	var out http.ResponseWriter = rec
	if c.cors != nil {
		if hr.Method == http.MethodOptions {
			c.cors.preflight(rec, hr)
			return
		}
		out = c.cors.wrap(rec, hr)
	}
	if !c.authenticate(out, req) {
		return
	}
	if herr := req.negotiate(); herr != nil {
		if herr.Status != http.StatusNotAcceptable && herr.Status != http.StatusBadRequest {
			panic("unexpected negotiation status")
		}
		WriteError(out, req, herr)
		return
	}
	out.Header().Set("openstack-api-version", "placement "+req.Version.String())
	// Upstream checks Content-Length before routing.
	if herr := checkContentLength(req); herr != nil {
		WriteError(out, req, herr)
		return
	}
	c.next.Dispatch(out, req)
}
