package handlers

import (
	"encoding/json"
	"errors"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// aggregatesBody is the aggregates document; the generation appears from
// microversion 1.19.
type aggregatesBody struct {
	Aggregates []string `json:"aggregates"`
	Generation *int64   `json:"resource_provider_generation,omitempty"`
}

// aggregatesResponse renders the aggregates answer. Upstream records no
// time for memberships, so Last-Modified is now.
func (a *API) aggregatesResponse(r *middleware.Request, p store.Provider, uuids []string) *middleware.Response {
	if uuids == nil {
		uuids = []string{}
	}
	body := aggregatesBody{Aggregates: uuids}
	if r.At(microversion.AggregateGeneration) {
		body.Generation = &p.Generation
	}
	return middleware.OK(body).WithLastModified(a.now())
}

// GetAggregates is GET /resource_providers/{uuid}/aggregates (1.1).
func (a *API) GetAggregates(r *middleware.Request) (*middleware.Response, error) {
	g := reads(policy.AggregateList).from(microversion.Aggregates).mediaBeforeVersion()
	p, aggs, err := providerPart(r, g, a.store.ProviderAggregates, providerNotFound)
	if err != nil {
		return nil, err
	}
	return a.aggregatesResponse(r, p, aggs), nil
}

// aggregatesRequest is a validated PUT aggregates body. Generation is
// only meaningful when HasGeneration (1.19); nil then means an integer
// no provider generation can equal.
type aggregatesRequest struct {
	Aggregates    []string
	HasGeneration bool
	Generation    *int64
}

// decodeAggregates reads and validates a PUT aggregates body: a bare list
// of uuids before 1.19, then an object with aggregates and
// resource_provider_generation.
func (a *API) decodeAggregates(r *middleware.Request) (aggregatesRequest, error) {
	var out aggregatesRequest
	doc, err := r.DecodeJSON(a.schemas.AggregatesPut(r.Version))
	if err != nil {
		return out, err
	}
	list := doc
	if m, isObj := doc.(map[string]any); isObj {
		list = m["aggregates"]
		out.HasGeneration = true
		out.Generation = jsonInteger(m["resource_provider_generation"].(json.Number))
	}
	out.Aggregates = []string{}
	for _, a := range list.([]any) {
		out.Aggregates = append(out.Aggregates, a.(string))
	}
	return out, nil
}

// SetAggregates is PUT /resource_providers/{uuid}/aggregates (1.1).
func (a *API) SetAggregates(r *middleware.Request) (*middleware.Response, error) {
	// Upstream looks the provider up before reading the body.
	g := writes(policy.AggregateUpdate).from(microversion.Aggregates).mediaBeforeVersion()
	if _, err := a.guardedProvider(r, g); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	req, err := a.decodeAggregates(r)
	if err != nil {
		return nil, err
	}
	var gen *int64
	if req.HasGeneration {
		if req.Generation == nil {
			return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
		}
		gen = req.Generation
	}
	p, _, err := a.store.SetProviderAggregates(r.Context(), uuid, gen, req.Aggregates)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	// Upstream echoes the request's list, in the request's order.
	return a.aggregatesResponse(r, p, req.Aggregates), nil
}
