package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Reshape is POST /reshaper (1.30): inventories of several providers and
// allocations of several consumers, replaced atomically.
func (a *API) Reshape(r *middleware.Request) (*middleware.Response, error) {
	if !r.At(microversion.Reshaper) {
		return nil, apierror.NotFound("")
	}
	if herr := r.RequireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.Authorize(policy.Reshape); err != nil {
		return nil, err
	}
	body, err := r.ReadValidated(a.schemas.ReshaperPost(r.Version.Minor))
	if err != nil {
		return nil, err
	}
	invs, allocs, err := decodeReshape(body, r.Version)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := a.store.Reshape(r.Context(), invs, allocs); err != nil {
		return nil, reshapeError(err)
	}
	return middleware.NoContent(), nil
}

// reshapeError maps store errors to upstream's reshaper answers.
func reshapeError(err error) error {
	detail := store.Detail(err)
	switch {
	case errors.Is(err, store.ErrUnknownProvider):
		uuid := strings.TrimSuffix(strings.TrimPrefix(detail, "No resource provider with uuid "), " found")
		return apierror.Codedf(http.StatusBadRequest, apierror.CodeProviderNotFound, "Resource provider %s in inventories not found: %s", uuid, detail)
	case errors.Is(err, store.ErrProviderGeneration), errors.Is(err, store.ErrConsumerGeneration):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", detail)
	case errors.Is(err, store.ErrConcurrentUpdate):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", detail)
	case errors.Is(err, store.ErrInvalid):
		return apierror.BadRequest("%s", detail)
	case errors.Is(err, store.ErrNotFound):
		return apierror.BadRequest("malformed reshaper data: %s", detail)
	case errors.Is(err, store.ErrInventoryInUse):
		return apierror.Conflict(apierror.CodeInventoryInUse, "update conflict: %s", detail)
	case errors.Is(err, store.ErrCapacityExceeded):
		return apierror.Errorf(http.StatusConflict, "Unable to allocate inventory: %s", detail)
	}
	return err
}

// maxUnitDefault is the max_unit an inventory gets when none is given
// (placement db constants MAX_INT).
const maxUnitDefault = math.MaxInt32

// decodeReshape reads the POST /reshaper body.
func decodeReshape(raw json.RawMessage, mv microversion.Version) ([]store.ProviderInventories, []store.ConsumerAllocations, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, nil, err
	}
	invs, err := obj.object("inventories")
	if err != nil {
		return nil, nil, err
	}
	var targets []store.ProviderInventories
	for _, rp := range invs.keys {
		entry, err := decodeObject(invs.vals[rp])
		if err != nil {
			return nil, nil, err
		}
		gen, err := entry.intOr("resource_provider_generation", 0)
		if err != nil {
			return nil, nil, err
		}
		byClass, err := entry.object("inventories")
		if err != nil {
			return nil, nil, err
		}
		pi := store.ProviderInventories{ProviderUUID: rp, Generation: gen}
		for _, rc := range byClass.keys {
			inv, err := decodeInventory(rc, byClass.vals[rc])
			if err != nil {
				return nil, nil, err
			}
			pi.Inventories = append(pi.Inventories, inv)
		}
		targets = append(targets, pi)
	}
	allocs, err := decodeConsumersDict(obj.vals["allocations"], mv)
	if err != nil {
		return nil, nil, err
	}
	return targets, allocs, nil
}

// decodeInventory reads one inventory record with upstream's defaults.
func decodeInventory(rc string, raw json.RawMessage) (store.Inventory, error) {
	inv := store.Inventory{ResourceClass: rc}
	obj, err := decodeObject(raw)
	if err != nil {
		return inv, err
	}
	fields := []struct {
		key string
		dst *int64
		def int64
	}{
		{"total", &inv.Total, 0},
		{"reserved", &inv.Reserved, 0},
		{"min_unit", &inv.MinUnit, 1},
		{"max_unit", &inv.MaxUnit, maxUnitDefault},
		{"step_size", &inv.StepSize, 1},
	}
	for _, f := range fields {
		if *f.dst, err = obj.intOr(f.key, f.def); err != nil {
			return inv, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	if inv.AllocationRatio, err = obj.floatOr("allocation_ratio", 1.0); err != nil {
		return inv, fmt.Errorf("allocation_ratio: %w", err)
	}
	return inv, nil
}
