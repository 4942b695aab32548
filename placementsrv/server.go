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

	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Options configures a Server.
type Options struct {
	// Store holds all state; required.
	Store store.Store
	// Logger receives one line per request; nil means no logging.
	Logger *zap.Logger
	// Auth is the auth strategy: "noauth2" (the default).
	Auth string
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

// Server is the Placement API. It is safe for concurrent use.
type Server struct {
	store   store.Store
	log     *zap.Logger
	now     func() time.Time
	auth    string
	routes  []route
	schemas *schema.Set
	cands   candidateSettings
	metrics *serverMetrics // nil: not instrumented (benchmarks only)
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
	default:
		return nil, fmt.Errorf("placementsrv: unsupported auth strategy %q", opts.Auth)
	}
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
// auth, microversion negotiation, then dispatch.
func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	req := &request{Request: hr, id: newRequestID(), srv: s}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("x-openstack-request-id", req.id)
	s.requestStarted()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving request", zap.Any("panic", p), zap.String("request_id", req.id))
			writeError(rec, req, errorf(http.StatusInternalServerError, "An unexpected error occurred."))
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
	if !s.authenticate(rec, req) {
		return
	}
	if herr := req.negotiate(); herr != nil {
		if herr.Status != http.StatusNotAcceptable && herr.Status != http.StatusBadRequest {
			panic("unexpected negotiation status")
		}
		writeError(rec, req, herr)
		return
	}
	rec.Header().Set("openstack-api-version", "placement "+req.mv.String())
	s.dispatch(rec, req)
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
		writeError(w, req, notFound(""))
		return
	}
	req.route, req.params = rt, params
	h, ok := rt.methods[req.Method]
	if !ok {
		e := &httpError{
			Status:  http.StatusMethodNotAllowed,
			Raw:     true,
			Detail:  "The method " + req.Method + " is not allowed for this resource. <br /><br />\nThe method specified is not allowed for this resource.",
			Headers: http.Header{"Allow": {strings.Join(rt.order, ", ")}},
		}
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
func (s *Server) toHTTPError(req *request, err error) *httpError {
	if he, ok := asHTTPError(err); ok {
		return he
	}
	if errors.Is(err, context.Canceled) {
		return errorf(499, "client closed request")
	}
	s.log.Error("unexpected error", zap.Error(err), zap.String("request_id", req.id),
		zap.String("method", req.Method), zap.String("path", req.URL.Path))
	return errorf(http.StatusInternalServerError, "An unexpected error occurred.")
}

// checkContentLength mirrors upstream's guard: a body needs a content type.
func checkContentLength(req *request) *httpError {
	if _, bad := req.Header[invalidLengthHeader]; bad {
		return badRequest("content-length header must be an integer")
	}
	cl := req.Header.Get("Content-Length")
	if cl == "" {
		return nil
	}
	n := 0
	for _, c := range cl {
		if c < '0' || c > '9' {
			return badRequest("content-length header must be an integer")
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			break
		}
	}
	if n > 0 && req.Header.Get("Content-Type") == "" {
		return badRequest("content-type header required when content-length > 0")
	}
	return nil
}
