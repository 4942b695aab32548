package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Reshape is POST /reshaper (1.30): inventories of several providers and
// allocations of several consumers, replaced atomically.
func (a *API) Reshape(r *middleware.Request) (*middleware.Response, error) {
	return bulkWrite(r, writes(policy.Reshape).from(microversion.Reshaper), a.schemas.ReshaperPost, decodeReshape,
		func(ctx context.Context, req reshapeRequest) error {
			return reshapeError(a.store.ReshapeUnder(ctx, a.capacityRule(), req.inventories, req.allocations))
		})
}

// reshapeError maps store errors to upstream's reshaper answers: its own
// for providers, generations and inventory in use, and an allocation
// write's for the rest, with a miss worded as malformed data.
func reshapeError(err error) error {
	if err == nil {
		return nil
	}
	detail := store.Detail(err)
	switch {
	case errors.Is(err, store.ErrUnknownProvider):
		uuid := strings.TrimSuffix(strings.TrimPrefix(detail, "No resource provider with uuid "), " found")
		return apierror.Codedf(http.StatusBadRequest, apierror.CodeProviderNotFound, "Resource provider %s in inventories not found: %s", uuid, detail)
	case errors.Is(err, store.ErrProviderGeneration), errors.Is(err, store.ErrConsumerGeneration):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", detail)
	case errors.Is(err, store.ErrConcurrentUpdate):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", detail)
	case errors.Is(err, store.ErrInventoryInUse):
		return apierror.Conflict(apierror.CodeInventoryInUse, "update conflict: %s", detail)
	}
	return allocationWriteError(err, "malformed reshaper data: ")
}

// maxUnitDefault is the max_unit an inventory gets when none is given
// (placement db constants MAX_INT).
const maxUnitDefault = math.MaxInt32

// reshapeRequest is a decoded POST /reshaper body.
type reshapeRequest struct {
	inventories []store.ProviderInventories
	allocations []store.ConsumerAllocations
}

// decodeReshape reads the POST /reshaper body.
func decodeReshape(raw json.RawMessage, mv microversion.Version) (reshapeRequest, error) {
	var none reshapeRequest
	obj, err := decodeObject(raw)
	if err != nil {
		return none, err
	}
	targets, err := membersOf(obj, "inventories", decodeProviderInventories)
	if err != nil {
		return none, err
	}
	allocs, err := decodeConsumersDict(obj.vals["allocations"], mv)
	if err != nil {
		return none, err
	}
	return reshapeRequest{inventories: targets, allocations: allocs}, nil
}

// decodeProviderInventories reads one provider's entry of the reshaper's
// inventories.
func decodeProviderInventories(rp string, raw json.RawMessage) (store.ProviderInventories, error) {
	pi := store.ProviderInventories{ProviderUUID: rp}
	entry, err := decodeObject(raw)
	if err != nil {
		return pi, err
	}
	if pi.Generation, err = entry.intOr("resource_provider_generation", 0); err != nil {
		return pi, err
	}
	pi.Inventories, err = membersOf(entry, "inventories", decodeInventory)
	return pi, err
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
