package placementsrv

import (
	"net/url"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Usages answer "what is used now", so their Last-Modified is the current
// time, as upstream.

func (s *Server) listProviderUsages(r *request) (*response, error) {
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPUsages); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	p, usages, err := s.store.ProviderUsages(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFoundTwice(err, uuid, ":")
	}
	body := map[string]any{"resource_provider_generation": p.Generation, "usages": usages}
	return ok(body).withLastModified(s.now()), nil
}

func (s *Server) getTotalUsages(r *request) (*response, error) {
	if !r.at(microversion.Usages) {
		return nil, apierror.NotFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	// Upstream's target is the project asked about (None when absent).
	q := r.URL.Query()
	target := policy.Target{ProjectID: policy.None()}
	if vs, ok := q["project_id"]; ok {
		target.ProjectID = policy.Str(vs[len(vs)-1])
	}
	if err := r.authorizeTarget(policyTotalUsages, &target); err != nil {
		return nil, err
	}
	if err := s.schemas.UsagesQuery(r.mv.Minor).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	f := store.UsageFilter{ProjectID: lastValue(q, "project_id"), UserID: lastValue(q, "user_id")}
	grouped := r.at(microversion.ConsumerTypes)
	if grouped {
		f.ConsumerType = lastValue(q, "consumer_type")
	} else {
		f.ConsumerType = "all"
	}
	byType, err := s.store.TotalUsages(r.Context(), f)
	if err != nil {
		return nil, err
	}
	var usages any
	if grouped {
		out := make(map[string]map[string]int64, len(byType))
		for ct, tu := range byType {
			m := make(map[string]int64, len(tu.Usages)+1)
			for rc, n := range tu.Usages {
				m[rc] = n
			}
			m["consumer_count"] = tu.ConsumerCount
			out[ct] = m
		}
		usages = out
	} else {
		flat := map[string]int64{}
		for _, tu := range byType {
			for rc, n := range tu.Usages {
				flat[rc] += n
			}
		}
		usages = flat
	}
	return ok(map[string]any{"usages": usages}).withLastModified(s.now()), nil
}

// lastValue is webob's MultiDict lookup: a repeated parameter's last value.
func lastValue(q url.Values, key string) string {
	vs := q[key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}
