package handlers

import (
	"net/url"
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// CapacityReporter counts how many more of each Nova flavor fit over a
// snapshot (package capacity/source, which reads Nova; the server does
// not). flavor "" is every flavor; by is "", "host", "aggregate" or
// "zone". Its errors are Placement's (*apierror.Error) or internal.
type CapacityReporter interface {
	CapacityReport(snap *readmodel.Snapshot, flavor, by string) (any, error)
}

// capacityBy are the breakdowns the route accepts; "az" is "zone".
var capacityBy = []string{"host", "aggregate", "zone", "az"}

// Capacity is GET /_placement-syncd/capacity, placement-syncd's own
// route: capacity by flavor from the current snapshot, for flavor=NAME
// or all, broken down by=host|aggregate|zone. It is a 404 while capacity
// by flavor is off.
func (a *API) Capacity(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.Capacity).check(r); err != nil {
		return nil, err
	}
	if a.capacity == nil {
		return nil, apierror.NotFound("Capacity by flavor is off (capacity.enabled: false).")
	}
	flavor, by, herr := capacityParams(r.URL.RawQuery)
	if herr != nil {
		return nil, herr
	}
	snap, err := a.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	body, err := a.capacity.CapacityReport(snap, flavor, by)
	if err != nil {
		return nil, err
	}
	return middleware.OK(body), nil
}

// capacityParams reads flavor and by, each at most once; anything else
// is a 400.
func capacityParams(raw string) (flavor, by string, herr *apierror.Error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "", "", apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	for key, vals := range q {
		switch {
		case key != "flavor" && key != "by":
			return "", "", apierror.BadRequest("Invalid query string parameters: unknown parameter %q (flavor, by)", key)
		case len(vals) > 1:
			return "", "", apierror.BadRequest("Invalid query string parameters: %s given %d times", key, len(vals))
		}
	}
	flavor, by = q.Get("flavor"), q.Get("by")
	if q.Has("flavor") && flavor == "" {
		return "", "", apierror.BadRequest("Invalid query string parameters: flavor must not be empty")
	}
	if q.Has("by") && !slices.Contains(capacityBy, by) {
		return "", "", apierror.BadRequest("Invalid query string parameters: by must be host, aggregate or zone, got %q", by)
	}
	if by == "az" {
		by = "zone"
	}
	return flavor, by, nil
}
