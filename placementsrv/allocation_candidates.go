package placementsrv

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// candidateSettings are the server-wide allocation candidates options.
type candidateSettings struct {
	opts      candidates.Options // Randomize, MaxCandidates and Order
	prefilter *candidates.Prefilter
	render    candidates.Renderer
}

func (c *candidateSettings) configure(opts Options) error {
	p, err := candidates.NewPrefilter(opts.OwnerNovaPrefilter, opts.OwnerNovaGate, opts.SchedulerUsers)
	if err != nil {
		return fmt.Errorf("placementsrv: %w", err)
	}
	c.prefilter = p
	c.opts.Randomize = opts.RandomizeAllocationCandidates
	if opts.MaxAllocationCandidates < 0 {
		return fmt.Errorf("placementsrv: MaxAllocationCandidates %d is negative", opts.MaxAllocationCandidates)
	}
	c.opts.MaxCandidates = opts.MaxAllocationCandidates
	order, ok := candidates.ParseOrder(opts.AllocationCandidatesOrder)
	if !ok {
		return fmt.Errorf("placementsrv: unknown AllocationCandidatesOrder %q (want depth-first or round-robin)", opts.AllocationCandidatesOrder)
	}
	c.opts.Order = order
	return nil
}

// listAllocationCandidates is GET /allocation_candidates.
func (s *Server) listAllocationCandidates(r *request) (*response, error) {
	if !r.at(microversion.AllocationCandidates) {
		return nil, apierror.NotFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyCandidatesList); err != nil {
		return nil, err
	}
	q := query.Values(r.URL.RawQuery)
	if err := s.schemas.AllocationCandidatesQuery(r.minor()).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	req, herr := candidates.ParseQuery(r.URL.RawQuery, q, r.mv)
	if herr != nil {
		return nil, herr
	}
	s.cands.prefilter.Apply(r.creds.UserID.Get(), &req)
	snap, err := s.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	opts := s.cands.opts
	opts.NestedAware = r.at(microversion.CandidatesNested)
	cq, err := candidates.Prepare(snap, req, opts)
	var nf *candidates.NotFoundError
	switch {
	case errors.As(err, &nf) && nf.Class:
		return nil, apierror.BadRequest("Invalid resource class in resources parameter: %s", nf.Error())
	case errors.As(err, &nf):
		return nil, apierror.BadRequest("%s", nf.Error())
	case err != nil:
		return nil, err
	}
	ans := s.cands.render.Answer(snap, cq, &req, r.mv, r.Method == http.MethodHead)
	resp := ok(nil).withLastModified(s.now())
	if ans.Stream == nil {
		resp.body = jsonenc.Raw(ans.Body)
		return resp, nil
	}
	resp.stream = func(w *streamWriter) error { return ans.Stream(w) }
	return resp, nil
}
