package handlers

import (
	"errors"
	"net/http"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// candidateSettings are the server-wide allocation candidates options.
type candidateSettings struct {
	opts      candidates.Options // Randomize, MaxCandidates, Order and WideTrees
	prefilter *candidates.Prefilter
	render    candidates.Renderer
}

// ListAllocationCandidates is GET /allocation_candidates.
func (a *API) ListAllocationCandidates(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.CandidatesList).from(microversion.AllocationCandidates).check(r); err != nil {
		return nil, err
	}
	q := query.Values(r.URL.RawQuery)
	if err := a.schemas.AllocationCandidatesQuery(r.Version).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	req, herr := candidates.ParseQuery(r.URL.RawQuery, q, r.Version)
	if herr != nil {
		return nil, herr
	}
	if a.cands.prefilter != nil {
		a.cands.prefilter.Apply(r.Creds.UserID.Get(), &req)
	}
	snap, err := a.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	opts := a.cands.opts
	opts.NestedAware = r.At(microversion.CandidatesNested)
	cq, err := candidates.Prepare(snap, req, opts)
	if err != nil {
		return nil, candidatesNotFound(err)
	}
	ans := a.cands.render.Answer(snap, cq, &req, r.Version, r.Method == http.MethodHead)
	resp := middleware.OK(nil).WithLastModified(a.now())
	if ans.Stream == nil {
		resp.Body = jsonenc.Raw(ans.Body)
		return resp, nil
	}
	resp.Stream = func(w *middleware.StreamWriter) error { return ans.Stream(w) }
	return resp, nil
}

// candidatesNotFound maps an unknown class or trait to upstream's 400.
func candidatesNotFound(err error) error {
	var nf *candidates.NotFoundError
	switch {
	case errors.As(err, &nf) && nf.Class:
		return apierror.BadRequest("Invalid resource class in resources parameter: %s", nf.Error())
	case errors.As(err, &nf):
		return apierror.BadRequest("%s", nf.Error())
	}
	return err
}
