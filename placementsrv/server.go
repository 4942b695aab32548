// Package placementsrv serves the OpenStack Placement REST API
// (microversions 1.0–1.39) over a store.Store. It assembles the layers
// below it:
//
//	middleware  request id, log, metrics, CORS, auth, microversions, errors
//	routes.go   the route table: URL template and method to handler
//	handlers    one file per resource family, over the store
//	candidates  allocation candidates: parse, search, render; the read model
//	query       query-string parsing shared by handlers and candidates
//
// plus inventorymetrics, the resource gauges read from the read model at
// scrape time.
package placementsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/handlers"
	"github.com/placement-syncd/placement-syncd/placementsrv/inventorymetrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
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
	// Policy is the compiled policy; nil means Release's defaults in
	// legacy mode (no scope checks, deprecated rules OR'ed in).
	Policy *policy.Enforcer
	// Release is the upstream Placement release whose rules the API
	// follows where releases differ (the zero value: 15.0.0).
	Release release.Release
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
	// candidates after another) or "breadth-first" (alias "round-robin":
	// one per root in turn).
	AllocationCandidatesOrder string
	// OptimizeForWideProviderTrees is Placement 15.0.0's
	// [workarounds]optimize_for_wide_provider_trees, which changes answers
	// there (see candidates.Options.WideTrees).
	OptimizeForWideProviderTrees bool
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
	// zero value: microversion.Max, all of them), so that clients'
	// fallbacks for older Placement servers can be exercised against
	// this one.
	MaxMicroversion microversion.Version
	// Registerer receives the API's metrics (request metrics and the
	// inventory gauges); nil means a private registry.
	Registerer prometheus.Registerer
	// MetricsHandler, when set, is served at GET /metrics in front of
	// auth (see middleware.WithMetricsEndpoint); nil leaves /metrics a
	// 404, as upstream.
	MetricsHandler http.Handler
	// OmitOpenStackMetrics leaves out the openstack-exporter compatible
	// openstack_placement_* family.
	OmitOpenStackMetrics bool
	// Limits bound the listener's timeouts and connections; zero fields
	// take httpserve.DefaultLimits.
	Limits httpserve.Limits
	// MaxStaleness, for a replica's store, is how long after memory was
	// last confirmed with the change feed a read that cannot confirm it
	// (the database not answering) is still answered from memory; later,
	// or with 0 (the default), such a read answers 503.
	MaxStaleness time.Duration
	// Capacity answers GET /_placement-syncd/capacity (capacity by
	// flavor, which reads Nova: the server only asks it); nil: off, 404.
	Capacity CapacityReporter
}

// CapacityReporter counts capacity by flavor over a snapshot.
type CapacityReporter = handlers.CapacityReporter

// TokenValidator checks a Keystone token; *keystone.Client is one.
type TokenValidator = middleware.TokenValidator

// CORSOptions configures cross-origin resource sharing.
type CORSOptions = middleware.CORSOptions

// DefaultCORSOptions are Placement's CORS defaults; the origin list is
// empty.
func DefaultCORSOptions() CORSOptions { return middleware.DefaultCORSOptions() }

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
	mw     middleware.Options // validated; Metrics nil: not instrumented (benchmarks only)
	router *router
	// write is router, after catching up with other replicas for
	// requests that may write (catchup.go).
	write middleware.Router
	// metricsEndpoint is Options.MetricsHandler.
	metricsEndpoint http.Handler
	limits          httpserve.Limits
}

// New validates opts and builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("placementsrv: a store is required")
	}
	mw := middleware.Options{
		Logger: opts.Logger, Auth: opts.Auth, Tokens: opts.Tokens, WWWAuthenticateURI: opts.WWWAuthenticateURI,
		MaxMicroversion: opts.MaxMicroversion, Policy: opts.Policy, Release: opts.Release, CORS: opts.CORS,
	}
	if err := mw.Validate(); err != nil {
		return nil, fmt.Errorf("placementsrv: %w", err)
	}
	ho, err := handlerOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("placementsrv: %w", err)
	}
	if mw.Metrics, err = registerMetrics(opts); err != nil {
		return nil, err
	}
	rt := newRouter(handlers.New(ho))
	write, err := catchUpBeforeWrites(opts, rt)
	if err != nil {
		return nil, err
	}
	return &Server{mw: mw, router: rt, write: write, metricsEndpoint: opts.MetricsHandler, limits: opts.Limits}, nil
}

// handlerOptions checks the allocation candidates settings.
func handlerOptions(opts Options) (handlers.Options, error) {
	ho := handlers.Options{Store: opts.Store, Now: opts.Now, Release: opts.Release, Capacity: opts.Capacity}
	p, err := candidates.NewPrefilter(opts.OwnerNovaPrefilter, opts.OwnerNovaGate, opts.SchedulerUsers)
	if err != nil {
		return ho, err
	}
	ho.Prefilter = p
	ho.Candidates.Randomize = opts.RandomizeAllocationCandidates
	if opts.MaxAllocationCandidates < 0 {
		return ho, fmt.Errorf("MaxAllocationCandidates %d is negative", opts.MaxAllocationCandidates)
	}
	ho.Candidates.MaxCandidates = opts.MaxAllocationCandidates
	order, ok := candidates.ParseOrder(opts.AllocationCandidatesOrder)
	if !ok {
		return ho, fmt.Errorf("unknown AllocationCandidatesOrder %q (want depth-first or breadth-first)", opts.AllocationCandidatesOrder)
	}
	ho.Candidates.Order = order
	ho.Candidates.WideTrees = opts.OptimizeForWideProviderTrees
	return ho, nil
}

// registerMetrics registers the request metrics and the inventory gauges.
func registerMetrics(opts Options) (*middleware.Metrics, error) {
	reg := metrics.Private(opts.Registerer)
	m, err := middleware.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("placementsrv: register metrics: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if err := reg.Register(inventorymetrics.New(opts.Store, log.Named("metrics"), !opts.OmitOpenStackMetrics)); err != nil {
		return nil, fmt.Errorf("placementsrv: register inventory metrics: %w", err)
	}
	return m, nil
}

// Handler returns the HTTP handler with all middleware applied.
func (s *Server) Handler() http.Handler {
	chain := middleware.New(s.mw, s.write)
	if s.mw.Metrics != nil && s.metricsEndpoint != nil {
		return middleware.WithMetricsEndpoint(s.metricsEndpoint, chain)
	}
	return chain
}

// Run serves on ln until ctx ends, then shuts down gracefully, giving
// in-flight requests up to grace to finish.
func (s *Server) Run(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:     s.Handler(),
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	served, shutdown := httpserve.RunLimited(ctx, srv, middleware.NewLengthCheckListener(ln), grace, s.limits)
	if shutdown != nil {
		return fmt.Errorf("shut down placement API: %w", shutdown)
	}
	if served != nil {
		return fmt.Errorf("serve placement API: %w", served)
	}
	return nil
}
