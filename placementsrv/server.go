// Package placementsrv serves the OpenStack Placement REST API
// (microversions 1.0–1.39) over a store.Store.
//
// Cross-cutting concerns are middleware (request id, logging, auth,
// microversion negotiation); dispatch is one route table (routes.go); each
// resource family has its own handler file. Handlers return a *response or an
// error, and writeResponse/writeError are the only places that write bytes.
package placementsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Options configures a Server.
type Options struct {
	// Store holds all state; required.
	Store store.Store
	// Logger receives one line per request; nil means no logging.
	Logger *zap.Logger
	// Auth is the auth strategy: "noauth2" (the default) or "keystone".
	Auth string
	// Tokens validates Keystone tokens; required with Auth "keystone".
	Tokens TokenValidator
	// WWWAuthenticateURI is announced in a 401's WWW-Authenticate header
	// with Auth "keystone" (Keystone's public endpoint).
	WWWAuthenticateURI string
	// Policy is the compiled policy; nil means Placement's defaults in
	// legacy mode (no scope checks, deprecated rules OR'ed in).
	Policy *policy.Enforcer
	// CORS enables cross-origin resource sharing; nil means off.
	CORS *CORSOptions
	// Now is the clock used for Last-Modified on computed answers; nil
	// means time.Now.
	Now func() time.Time
	// RandomizeAllocationCandidates is Placement's
	// randomize_allocation_candidates: a limited answer is a random
	// sample, an unlimited one is shuffled (default false: first N).
	RandomizeAllocationCandidates bool
	// MaxAllocationCandidates stops generating allocation candidates
	// after this many (0, the default: no cap, as Placement 8.0.0).
	MaxAllocationCandidates int
	// AllocationCandidatesOrder is "depth-first" (the default: one root's
	// candidates after another) or "round-robin" (one per root in turn).
	AllocationCandidatesOrder string
	// OwnerNovaPrefilter adds root_required=OWNER_NOVA to allocation
	// candidate requests from SchedulerUsers: PrefilterOff (default),
	// PrefilterOn, or PrefilterAuto (while OwnerNovaGate is open).
	OwnerNovaPrefilter string
	OwnerNovaGate      OwnerNovaGate
	// SchedulerUsers are the user ids whose requests the pre-filter
	// applies to (with noauth2, the token's user part; with Keystone,
	// the scheduler service user's id).
	SchedulerUsers []string
	// MaxMicroversion caps the microversions this server offers (the
	// zero value: 1.39, all of them), so that clients' fallbacks for
	// older Placement servers can be exercised against this one.
	MaxMicroversion microversion.Version
	// Registerer receives the API's metrics (metrics.go); nil means a
	// private registry.
	Registerer prometheus.Registerer
	// MetricsHandler, when set, is served at GET /metrics in front of
	// auth (see withMetricsEndpoint); nil leaves /metrics a 404, as
	// upstream.
	MetricsHandler http.Handler
	// OmitOpenStackMetrics leaves out the openstack-exporter compatible
	// openstack_placement_* family.
	OmitOpenStackMetrics bool
}

// OWNER_NOVA pre-filter modes (Options.OwnerNovaPrefilter).
const (
	PrefilterOff  = candidates.PrefilterOff  // never add the filter (the default)
	PrefilterOn   = candidates.PrefilterOn   // always add it
	PrefilterAuto = candidates.PrefilterAuto // add it while Options.OwnerNovaGate is open
)

// OwnerNovaGate tells the pre-filter whether every compute reports
// OWNER_NOVA; the reconciler implements it.
type OwnerNovaGate = candidates.OwnerNovaGate

// Server is the Placement API. It is safe for concurrent use.
type Server struct {
	store  store.Store
	log    *zap.Logger
	now    func() time.Time
	auth   string
	tokens TokenValidator
	// wwwAuthenticateURI goes into a keystone 401's WWW-Authenticate.
	wwwAuthenticateURI string
	policy             *policy.Enforcer
	cors               *cors
	routes             []route
	schemas            *schema.Set
	cands              candidateSettings
	maxMV              microversion.Version
	metrics            *serverMetrics // nil: not instrumented (benchmarks only)
}

// New validates opts and builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("placementsrv: a store is required")
	}
	s := &Server{store: opts.Store, log: opts.Logger, now: opts.Now, auth: opts.Auth}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	switch s.auth {
	case "", "noauth2":
		s.auth = "noauth2"
	case "keystone":
		if opts.Tokens == nil {
			return nil, errors.New("placementsrv: the keystone auth strategy needs a token validator")
		}
		s.tokens, s.wwwAuthenticateURI = opts.Tokens, opts.WWWAuthenticateURI
	default:
		return nil, fmt.Errorf("placementsrv: unsupported auth strategy %q", opts.Auth)
	}
	if err := s.capMicroversion(opts.MaxMicroversion); err != nil {
		return nil, err
	}
	s.policy = opts.Policy
	if s.policy == nil {
		p, err := policy.New(policy.Options{})
		if err != nil {
			return nil, fmt.Errorf("placementsrv: default policy: %w", err)
		}
		s.policy = p
	}
	s.cors = newCORS(opts.CORS)
	if err := s.cands.configure(opts); err != nil {
		return nil, err
	}
	if err := s.initMetrics(opts); err != nil {
		return nil, err
	}
	s.schemas = schema.New()
	s.routes = s.routeTable()
	return s, nil
}

// Handler returns the HTTP handler with all middleware applied.
func (s *Server) Handler() http.Handler {
	if s.metrics != nil && s.metrics.endpoint != nil {
		return withMetricsEndpoint(s.metrics.endpoint, http.HandlerFunc(s.serveHTTP))
	}
	return http.HandlerFunc(s.serveHTTP)
}

// Run serves on ln until ctx ends, then shuts down gracefully, giving
// in-flight requests up to grace to finish.
func (s *Server) Run(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(newLengthCheckListener(ln)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve placement API: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down placement API: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve placement API: %w", err)
	}
	return nil
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

// serveHTTP is the middleware chain, outermost first: request id and log,
// CORS, auth, microversion negotiation, then dispatch.
func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	req := &request{Request: hr, id: newRequestID(), srv: s}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("x-openstack-request-id", req.id)
	s.requestStarted()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving request", zap.Any("panic", p), zap.String("request_id", req.id))
			writeError(rec, req, apierror.Errorf(http.StatusInternalServerError, "An unexpected error occurred."))
		}
		if ce := s.log.Check(zap.InfoLevel, "request"); ce != nil {
			ce.Write(
				zap.String("method", hr.Method),
				zap.String("path", hr.URL.Path),
				zap.Int("status", rec.status),
				zap.String("microversion", req.loggedMicroversion()),
				zap.Duration("duration", time.Since(start)),
				zap.String("request_id", req.id),
			)
		}
		s.requestDone(req, rec.status, time.Since(start))
	}()
	var out http.ResponseWriter = rec
	if s.cors != nil {
		if hr.Method == http.MethodOptions {
			s.cors.preflight(rec, hr)
			return
		}
		out = s.cors.wrap(rec, hr)
	}
	if !s.authenticate(out, req) {
		return
	}
	if herr := req.negotiate(); herr != nil {
		if herr.Status != http.StatusNotAcceptable && herr.Status != http.StatusBadRequest {
			panic("unexpected negotiation status")
		}
		writeError(out, req, herr)
		return
	}
	out.Header().Set("openstack-api-version", "placement "+req.mv.String())
	s.dispatch(out, req)
}

// dispatch finds the route, checks the method and runs the handler.
func (s *Server) dispatch(w http.ResponseWriter, req *request) {
	// Upstream checks Content-Length before routing.
	if herr := checkContentLength(req); herr != nil {
		writeError(w, req, herr)
		return
	}
	rt, params := s.match(req.URL.Path)
	if rt == nil {
		writeError(w, req, apierror.NotFound(""))
		return
	}
	req.route, req.params = rt, params
	h, ok := rt.methods[req.Method]
	if !ok {
		e := &apierror.Error{
			Status: http.StatusMethodNotAllowed,
			Raw:    true,
			Detail: "The method " + req.Method + " is not allowed for this resource. <br /><br />\nThe method specified is not allowed for this resource.",
		}
		w.Header().Set("Allow", strings.Join(rt.order, ", "))
		w.Header().Set("vary", "openstack-api-version")
		writeError(w, req, e)
		return
	}
	w.Header().Set("vary", "openstack-api-version")
	resp, err := h(req)
	if err != nil {
		writeError(w, req, s.toHTTPError(req, err))
		return
	}
	writeResponse(w, req, resp)
}

// toHTTPError maps an error a handler returned to an answer. Handlers
// translate store errors they expect; anything else is logged and becomes
// a generic 500, so no internal detail leaks.
func (s *Server) toHTTPError(req *request, err error) *apierror.Error {
	if he, ok := apierror.As(err); ok {
		return he
	}
	if errors.Is(err, context.Canceled) {
		return apierror.Errorf(499, "client closed request")
	}
	s.log.Error("unexpected error", zap.Error(err), zap.String("request_id", req.id),
		zap.String("method", req.Method), zap.String("path", req.URL.Path))
	return apierror.Errorf(http.StatusInternalServerError, "An unexpected error occurred.")
}

// checkContentLength mirrors upstream's guard: a body needs a content type.
func checkContentLength(req *request) *apierror.Error {
	if _, bad := req.Header[invalidLengthHeader]; bad {
		return apierror.BadRequest("content-length header must be an integer")
	}
	cl := req.Header.Get("Content-Length")
	if cl == "" {
		return nil
	}
	n := 0
	for _, c := range cl {
		if c < '0' || c > '9' {
			return apierror.BadRequest("content-length header must be an integer")
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			break
		}
	}
	if n > 0 && req.Header.Get("Content-Type") == "" {
		return apierror.BadRequest("content-type header required when content-length > 0")
	}
	return nil
}
