package handlers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/explain"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// Explain parameters, taken out of the query before it is read as an
// allocation candidates query (whose schema refuses unknown keys).
const (
	explainMisses = "explain_misses" // nearest misses to list
	explainUser   = "explain_user"   // identity the pre-filter applies as
	// defaultMisses are listed when explain_misses is absent.
	defaultMisses = 5
	maxMisses     = 1000
)

// ExplainBody is the answer of the explain route.
type ExplainBody struct {
	Microversion string `json:"microversion"`
	// Query is the allocation candidates query explained.
	Query string `json:"query"`
	// Prefilter reports whether the OWNER_NOVA pre-filter changed the
	// request, as it would for PrefilterUser.
	Prefilter     bool   `json:"prefilter_applied"`
	PrefilterUser string `json:"prefilter_user,omitempty"`
	*explain.Explanation
}

// ExplainAllocationCandidates is GET
// /_placement-syncd/explain/allocation_candidates, placement-syncd's own
// route: the query of GET /allocation_candidates, read and checked the
// same way (same 400s), explained stage by stage. The pre-filter applies
// as it would to the scheduler's request (or explain_user's), since the
// admin asking is not the identity whose requests come back empty. The
// answer's own path is untouched: this is a separate pass.
func (a *API) ExplainAllocationCandidates(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.Explain).from(microversion.AllocationCandidates).check(r); err != nil {
		return nil, err
	}
	raw, misses, user, herr := explainParams(r.URL.RawQuery)
	if herr != nil {
		return nil, herr
	}
	q := query.Values(raw)
	if err := a.schemas.AllocationCandidatesQuery(r.Version).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	req, herr := candidates.ParseQuery(raw, q, r.Version)
	if herr != nil {
		return nil, herr
	}
	added := a.cands.prefilter.ApplyFor(user, &req)
	snap, err := a.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	opts := a.cands.opts
	opts.NestedAware = r.At(microversion.CandidatesNested)
	if _, err := candidates.Prepare(snap, req, opts); err != nil {
		return nil, candidatesNotFound(err)
	}
	ex, err := explain.Explain(snap, req, opts, explain.Options{Misses: misses, Prefiltered: added})
	if err != nil {
		return nil, fmt.Errorf("explain allocation candidates: %w", err)
	}
	body := ExplainBody{Microversion: r.Version.String(), Query: raw, Prefilter: added.Applied(), Explanation: ex}
	if added.Applied() {
		body.PrefilterUser = added.User()
	}
	return middleware.OK(body), nil
}

// explainParams splits the explain parameters off raw and returns the
// rest, the allocation candidates query, unchanged.
func explainParams(raw string) (rest string, misses int, user string, herr *apierror.Error) {
	misses = defaultMisses
	var kept []string
	for _, kv := range strings.Split(raw, "&") {
		key, val, _ := strings.Cut(kv, "=")
		switch key {
		case explainMisses:
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > maxMisses {
				return "", 0, "", apierror.BadRequest("Invalid query string parameters: %s must be an integer from 0 to %d, got %q", explainMisses, maxMisses, val)
			}
			misses = n
		case explainUser:
			user = query.Values(kv).Get(explainUser)
		default:
			if kv != "" {
				kept = append(kept, kv)
			}
		}
	}
	return strings.Join(kept, "&"), misses, user, nil
}
