package placementsrv

import (
	"context"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
)

// follower is a store shared with other replicas through a change feed
// (the ledger over MySQL): its memory may lag their writes by a poll
// interval.
type follower interface {
	Replicated() bool
	Poll(ctx context.Context, timeout time.Duration) error
	Fresh(ctx context.Context) error
}

// catchUpTimeout bounds the read of the feed before a write request.
const catchUpTimeout = 5 * time.Second

// catchUpRouter makes every request that may write first apply what
// other replicas committed, so that the checks a handler makes before it
// writes (the provider exists, the class is known) see what the database
// holds, as they would on the reference. A read first checks the feed's
// head when the store keeps reads consistent (Fresh), and GET / never
// waits for the database. A failed read of the feed is left to the
// write, which catches up itself and reports the database's failure; a
// read then answers from memory.
type catchUpRouter struct {
	middleware.Router
	f follower
}

// catchUpBeforeWrites wraps rt when st is a replica's store.
func catchUpBeforeWrites(st any, rt middleware.Router) middleware.Router {
	f, ok := st.(follower)
	if !ok || !f.Replicated() {
		return rt
	}
	return catchUpRouter{Router: rt, f: f}
}

func (c catchUpRouter) Dispatch(w http.ResponseWriter, r *middleware.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.URL.Path != "/" {
			_ = c.f.Fresh(r.Context())
		}
	case http.MethodOptions:
	default:
		_ = c.f.Poll(r.Context(), catchUpTimeout)
	}
	c.Router.Dispatch(w, r)
}
