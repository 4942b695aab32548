package handlers

import (
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Usages answer "what is used now", so their Last-Modified is the current
// time, as upstream.

// ListProviderUsages is GET /resource_providers/{uuid}/usages.
func (a *API) ListProviderUsages(r *middleware.Request) (*middleware.Response, error) {
	p, usages, err := providerPart(r, reads(policy.RPUsages), a.store.ProviderUsages, providerNotFoundTwice(":"))
	if err != nil {
		return nil, err
	}
	body := map[string]any{"resource_provider_generation": p.Generation, "usages": usages}
	return middleware.OK(body).WithLastModified(a.now()), nil
}

// GetTotalUsages is GET /usages (1.9).
func (a *API) GetTotalUsages(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(selfAuthorized).from(microversion.Usages).check(r); err != nil {
		return nil, err
	}
	// Upstream's target is the project asked about (None when absent).
	q := r.URL.Query()
	target := policy.Target{ProjectID: policy.None()}
	if vs, ok := q["project_id"]; ok {
		target.ProjectID = policy.Str(vs[len(vs)-1])
	}
	if err := r.AuthorizeTarget(policy.TotalUsages, &target); err != nil {
		return nil, err
	}
	if err := a.schemas.UsagesQuery(r.Version).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	f := store.UsageFilter{ProjectID: query.Last(q, "project_id"), UserID: query.Last(q, "user_id")}
	grouped := r.At(microversion.ConsumerTypes)
	if grouped {
		f.ConsumerType = query.Last(q, "consumer_type")
	} else {
		f.ConsumerType = "all"
	}
	byType, err := a.store.TotalUsages(r.Context(), f)
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
	return middleware.OK(map[string]any{"usages": usages}).WithLastModified(a.now()), nil
}
