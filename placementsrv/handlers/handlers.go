// Package handlers answers the Placement API's requests, one file per
// resource family (providers, inventories, traits, aggregates,
// allocations, usages, resource classes, reshaper, the root document and
// allocation candidates), each family's request-body decoding next to it.
// A handler checks the microversion and the policy, decodes, calls the
// store and maps its errors; it returns a *middleware.Response or an
// error (an *apierror.Error for every answer upstream gives) and never
// writes bytes itself.
package handlers

import (
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Options configures the handlers.
type Options struct {
	// Store holds all state; required.
	Store store.Store
	// Now is the clock used for Last-Modified on computed answers; nil
	// means time.Now.
	Now func() time.Time
	// Candidates are the server-wide allocation candidates settings:
	// Randomize, MaxCandidates and Order (NestedAware follows each
	// request's microversion).
	Candidates candidates.Options
	// Prefilter adds OWNER_NOVA to the scheduler's allocation candidates
	// requests; nil means off.
	Prefilter *candidates.Prefilter
	// Release is the upstream release whose rules the API follows where
	// releases differ (capacity of over-committed providers, uuid
	// formats).
	Release release.Release
	// Capacity answers GET /_placement-syncd/capacity; nil: capacity by
	// flavor is off and the route answers 404.
	Capacity CapacityReporter
}

// API holds what the handlers share. It is safe for concurrent use.
type API struct {
	store    store.Store
	now      func() time.Time
	schemas  *schema.Set
	cands    candidateSettings
	release  release.Release
	capacity CapacityReporter
}

// New builds the handlers.
func New(opts Options) *API {
	a := &API{store: opts.Store, now: opts.Now, schemas: schema.New(),
		cands: candidateSettings{opts: opts.Candidates, prefilter: opts.Prefilter}, release: opts.Release,
		capacity: opts.Capacity}
	if a.cands.opts.Owners == nil {
		a.cands.opts.Owners = &candidates.OwnerCache{}
	}
	if a.now == nil {
		a.now = time.Now
	}
	return a
}

// capacityRule is the allocation writes' capacity rule of a.release.
func (a *API) capacityRule() store.CapacityRule {
	if a.release == release.V8 {
		return store.CapacityStrict
	}
	return store.CapacityNoWorse
}

// link is one entry of a document's links.
type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// absoluteURL makes a Location header value the way webob does: scheme and
// host of the request plus path.
func absoluteURL(r *middleware.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// createdOrKept answers a PUT that creates what is missing: 201 when it
// created, 204 when it was there already; Location either way.
func createdOrKept(r *middleware.Request, created bool, path string) *middleware.Response {
	resp := middleware.NoContent()
	if created {
		resp.Status = http.StatusCreated
	}
	return resp.SetHeader("Location", absoluteURL(r, path))
}

// lastModified is upstream's pick_last_modified for one record: its update
// time, or its creation time when never updated.
func lastModified(created, updated time.Time) time.Time {
	if !updated.IsZero() {
		return updated
	}
	return created
}

// latest returns the later of a and b; a zero value loses.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
