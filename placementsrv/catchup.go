package placementsrv

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// follower is a store shared with other replicas through a change feed
// (the ledger over MySQL): its memory may lag their writes by a poll
// interval.
type follower interface {
	Replicated() bool
	Poll(ctx context.Context, timeout time.Duration) error
	// Fresh confirms, with consistent reads on, that memory holds every
	// write acknowledged before it was called; nil when they are off.
	Fresh(ctx context.Context) error
	// LastConfirmed is when the last confirmation began (zero: never).
	LastConfirmed() time.Time
}

// catchUpTimeout bounds the read of the feed before a write request.
const catchUpTimeout = 5 * time.Second

// catchUpRouter makes every request that may write first apply what
// other replicas committed, so that the checks a handler makes before it
// writes (the provider exists, the class is known) see what the database
// holds, as they would on the reference. A failed catch-up is left to
// the write, which catches up itself and reports the database's failure.
//
// A read first confirms memory with the feed (Fresh). When it cannot, it
// would answer with state older than writes another replica already
// acknowledged, so it answers 503 instead, unless memory was confirmed
// within maxStale, a staleness the operator accepted. GET / and paths no
// route serves never touch the database: their answers hold no state.
type catchUpRouter struct {
	middleware.Router
	f           follower
	maxStale    time.Duration
	unconfirmed *unconfirmedReads
}

// catchUpBeforeWrites wraps rt when opts.Store is a replica's store,
// registering the unconfirmed reads' counter with opts.Registerer.
func catchUpBeforeWrites(opts Options, rt middleware.Router) (middleware.Router, error) {
	if opts.MaxStaleness < 0 {
		return nil, fmt.Errorf("placementsrv: MaxStaleness %s is negative", opts.MaxStaleness)
	}
	f, ok := opts.Store.(follower)
	if !ok || !f.Replicated() {
		return rt, nil
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	u, err := newUnconfirmedReads(metrics.Private(opts.Registerer), log.Named("feed"))
	if err != nil {
		return nil, err
	}
	return catchUpRouter{Router: rt, f: f, maxStale: opts.MaxStaleness, unconfirmed: u}, nil
}

func (c catchUpRouter) Dispatch(w http.ResponseWriter, r *middleware.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.URL.Path != "/" && !c.confirmRead(w, r) {
			return
		}
	case http.MethodOptions:
	default:
		if c.f.Poll(r.Context(), catchUpTimeout) == nil {
			r.Request = r.Request.WithContext(store.CaughtUp(r.Context()))
		}
	}
	c.Router.Dispatch(w, r)
}

// confirmRead reports whether the read may be answered from memory,
// having answered 503 when not.
func (c catchUpRouter) confirmRead(w http.ResponseWriter, r *middleware.Request) bool {
	route := c.Route(r.URL.Path)
	if route == "" {
		return true
	}
	err := c.f.Fresh(r.Context())
	if err == nil {
		return true
	}
	last := c.f.LastConfirmed()
	stale := c.maxStale > 0 && !last.IsZero() && time.Since(last) <= c.maxStale
	// A client that left is no database failure: nobody reads the answer.
	if r.Context().Err() == nil {
		c.unconfirmed.record(unconfirmedRead{stale: stale, route: route, path: r.URL.Path, method: r.Method, last: last, err: err})
	}
	if stale {
		return true
	}
	// The database's error stays in the log: it may name its address.
	middleware.WriteError(w, r, apierror.Errorf(http.StatusServiceUnavailable,
		"This replica cannot confirm that it holds every acknowledged write: the database did not answer. Retry later or through another replica."))
	return false
}
