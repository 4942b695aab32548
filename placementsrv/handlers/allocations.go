package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// allocationsLastModified is the newest allocation's time, or now when
// there is none, as upstream's _last_modified_from_allocations.
func (a *API) allocationsLastModified(allocs []store.Allocation) time.Time {
	var t time.Time
	for _, a := range allocs {
		t = latest(t, lastModified(a.CreatedAt, a.UpdatedAt))
	}
	if t.IsZero() {
		return a.now()
	}
	return t
}

func resourcesOf(allocs []store.Allocation) map[string]int64 {
	out := make(map[string]int64, len(allocs))
	for _, a := range allocs {
		out[a.ResourceClass] = a.Used
	}
	return out
}

// consumerTypeName shows a consumer's type, "unknown" when it has none.
func consumerTypeName(t string) string {
	if t == "" {
		return store.UnknownConsumerType
	}
	return t
}

// GetConsumerAllocations is GET /allocations/{consumer_uuid}. An unknown
// consumer has no allocations rather than a 404, as upstream.
func (a *API) GetConsumerAllocations(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.AllocList).check(r); err != nil {
		return nil, err
	}
	held, err := a.store.ConsumerAllocations(r.Context(), r.Param("consumer_uuid"))
	if errors.Is(err, store.ErrNotFound) {
		return middleware.OK(map[string]any{"allocations": map[string]any{}}).WithLastModified(a.now()), nil
	}
	if err != nil {
		return nil, err
	}
	type byProvider struct {
		Generation int64            `json:"generation"`
		Resources  map[string]int64 `json:"resources"`
	}
	allocs := map[string]*byProvider{}
	for _, a := range held.Allocations {
		bp := allocs[a.ProviderUUID]
		if bp == nil {
			bp = &byProvider{Resources: map[string]int64{}}
			allocs[a.ProviderUUID] = bp
		}
		bp.Resources[a.ResourceClass] = a.Used
		bp.Generation = a.ProviderGeneration
	}
	out := map[string]any{"allocations": allocs}
	if r.At(microversion.AllocationsDict) {
		out["project_id"] = held.Consumer.ProjectID
		out["user_id"] = held.Consumer.UserID
		if r.At(microversion.ConsumerGeneration) {
			out["consumer_generation"] = held.Consumer.Generation
		}
		if r.At(microversion.ConsumerTypes) {
			out["consumer_type"] = consumerTypeName(held.Consumer.ConsumerType)
		}
	}
	return middleware.OK(out).WithLastModified(a.allocationsLastModified(held.Allocations)), nil
}

// ListProviderAllocations is GET /resource_providers/{uuid}/allocations.
func (a *API) ListProviderAllocations(r *middleware.Request) (*middleware.Response, error) {
	p, held, err := providerPart(r, reads(policy.RPAllocationList), a.store.ProviderAllocations, allocationsProviderNotFound)
	if err != nil {
		return nil, err
	}
	allocs := make(map[string]any, len(held))
	var all []store.Allocation
	for _, h := range held {
		entry := map[string]any{"resources": resourcesOf(h.Allocations)}
		if r.At(microversion.ConsumerGeneration) {
			entry["consumer_generation"] = h.Consumer.Generation
		}
		allocs[h.Consumer.UUID] = entry
		all = append(all, h.Allocations...)
	}
	out := map[string]any{"allocations": allocs, "resource_provider_generation": p.Generation}
	return middleware.OK(out).WithLastModified(a.allocationsLastModified(all)), nil
}

// PutConsumerAllocations is PUT /allocations/{consumer_uuid} in all its
// microversion forms.
func (a *API) PutConsumerAllocations(r *middleware.Request) (*middleware.Response, error) {
	if err := writes(policy.AllocUpdate).check(r); err != nil {
		return nil, err
	}
	raw := r.Param("consumer_uuid")
	consumerUUID, isUUID := query.NormalizeUUID(raw)
	if !isUUID {
		return nil, apierror.BadRequest("Malformed consumer_uuid: %s", raw)
	}
	body, err := r.ReadValidated(a.schemas.AllocationsPut(r.Version))
	if err != nil {
		return nil, err
	}
	req, err := decodeConsumerAllocations(consumerUUID, body, r.Version)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := a.store.ReplaceAllocationsUnder(r.Context(), a.capacityRule(), []store.ConsumerAllocations{req}); err != nil {
		return nil, allocationWriteError(err, "Unable to allocate inventory for consumer "+consumerUUID+": ")
	}
	return middleware.NoContent(), nil
}

// PostAllocations is POST /allocations (1.13): several consumers at once.
func (a *API) PostAllocations(r *middleware.Request) (*middleware.Response, error) {
	g := writes(policy.AllocManage).from(microversion.AllocationsPost)
	return bulkWrite(r, g, a.schemas.AllocationsPost, decodeConsumersDict,
		func(ctx context.Context, reqs []store.ConsumerAllocations) error {
			return allocationWriteError(a.store.ReplaceAllocationsUnder(ctx, a.capacityRule(), reqs), "Unable to allocate inventory ")
		})
}

// allocationWriteError maps store errors of an allocation write to
// upstream's answers; notFoundPrefix differs between PUT and POST.
func allocationWriteError(err error, notFoundPrefix string) error {
	if err == nil {
		return nil
	}
	detail := store.Detail(err)
	switch {
	case errors.Is(err, store.ErrConsumerGeneration):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", detail)
	case errors.Is(err, store.ErrConcurrentUpdate):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "Inventory and/or allocations changed while attempting to allocate: %s", detail)
	case errors.Is(err, store.ErrInvalid):
		return apierror.BadRequest("%s", detail)
	case errors.Is(err, store.ErrNotFound):
		return apierror.BadRequest("%s%s", notFoundPrefix, detail)
	case errors.Is(err, store.ErrCapacityExceeded):
		return apierror.Errorf(http.StatusConflict, "Unable to allocate inventory: %s", detail)
	}
	return err
}

// DeleteConsumerAllocations is DELETE /allocations/{consumer_uuid}.
func (a *API) DeleteConsumerAllocations(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.AllocDelete).check(r); err != nil {
		return nil, err
	}
	consumerUUID := r.Param("consumer_uuid")
	err := a.store.DeleteConsumerAllocations(r.Context(), consumerUUID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierror.NotFound("No allocations for consumer '%s'", consumerUUID)
	}
	if err != nil {
		return nil, err
	}
	return middleware.NoContent(), nil
}
