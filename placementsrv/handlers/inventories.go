package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// inventoryJSON is one inventory as the API shows it, fields in upstream's
// order.
type inventoryJSON struct {
	Total           int64     `json:"total"`
	Reserved        int64     `json:"reserved"`
	MinUnit         int64     `json:"min_unit"`
	MaxUnit         int64     `json:"max_unit"`
	StepSize        int64     `json:"step_size"`
	AllocationRatio ratioJSON `json:"allocation_ratio"`
	// Generation is left out when zero, as upstream's truthiness test does.
	Generation int64 `json:"resource_provider_generation,omitempty"`
}

func serializeInventory(inv store.Inventory, generation int64) inventoryJSON {
	return inventoryJSON{
		Total:           inv.Total,
		Reserved:        inv.Reserved,
		MinUnit:         inv.MinUnit,
		MaxUnit:         inv.MaxUnit,
		StepSize:        inv.StepSize,
		AllocationRatio: ratioJSON{value: inv.AllocationRatio},
		Generation:      generation,
	}
}

// ratioJSON is an allocation ratio: the stored float in Python's repr, or
// the integer the client sent when a write answers (see sentRatio).
type ratioJSON struct {
	value float64
	sent  string
}

func (r ratioJSON) MarshalJSON() ([]byte, error) {
	if r.sent != "" {
		return []byte(r.sent), nil
	}
	return pyFloat(r.value).MarshalJSON()
}

// inventoriesResponse renders a provider's inventories; Last-Modified is
// the newest inventory's, and absent (with Cache-Control kept) when there
// is none, as upstream. sent holds the ratios a write echoes, by class.
func inventoriesResponse(r *middleware.Request, p store.Provider, invs []store.Inventory, sent map[string]string) *middleware.Response {
	byClass := make(map[string]inventoryJSON, len(invs))
	var modified time.Time
	for _, inv := range invs {
		j := serializeInventory(inv, 0)
		j.AllocationRatio.sent = sent[inv.ResourceClass]
		byClass[inv.ResourceClass] = j
		modified = latest(modified, lastModified(inv.CreatedAt, inv.UpdatedAt))
	}
	resp := middleware.OK(map[string]any{"resource_provider_generation": p.Generation, "inventories": byClass})
	if len(invs) == 0 {
		if r.At(microversion.CacheHeaders) {
			resp.SetHeader("Cache-Control", "no-cache")
		}
		return resp
	}
	return resp.WithLastModified(modified)
}

// inventoryResponse renders one inventory; sent is the ratio a write
// echoes ("" for a read).
func inventoryResponse(p store.Provider, inv store.Inventory, status int, sent string) *middleware.Response {
	j := serializeInventory(inv, p.Generation)
	j.AllocationRatio.sent = sent
	resp := middleware.OK(j).WithLastModified(lastModified(inv.CreatedAt, inv.UpdatedAt))
	resp.Status = status
	return resp
}

func inventoryURL(uuid, class string) string {
	return providerURL(uuid) + "/inventories/" + class
}

// checkCapacity rejects inventories whose capacity is negative, or zero
// before microversion 1.26, in upstream's words.
func checkCapacity(r *middleware.Request, uuid string, invs ...store.Inventory) error {
	for _, inv := range invs {
		c := inv.Capacity()
		if r.At(microversion.ReservedEqualTotal) {
			if c < 0 {
				return fmt.Errorf("Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than total.", inv.ResourceClass, uuid)
			}
		} else if c <= 0 {
			return fmt.Errorf("Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than or equal to total.", inv.ResourceClass, uuid)
		}
	}
	return nil
}

// GetInventories is GET /resource_providers/{uuid}/inventories.
func (a *API) GetInventories(r *middleware.Request) (*middleware.Response, error) {
	p, invs, err := providerPart(r, reads(policy.InventoryList), a.store.GetInventories, providerNotFoundTwice(" :"))
	if err != nil {
		return nil, err
	}
	return inventoriesResponse(r, p, invs, nil), nil
}

// GetInventory is GET
// /resource_providers/{uuid}/inventories/{resource_class}.
func (a *API) GetInventory(r *middleware.Request) (*middleware.Response, error) {
	p, invs, err := providerPart(r, reads(policy.InventoryShow), a.store.GetInventories, providerNotFoundTwice(" :"))
	if err != nil {
		return nil, err
	}
	uuid, class := r.Param("uuid"), r.Param("resource_class")
	for _, inv := range invs {
		if inv.ResourceClass == class {
			return inventoryResponse(p, inv, http.StatusOK, ""), nil
		}
	}
	return nil, apierror.NotFound("No inventory of class %s for %s", class, uuid)
}

// CreateInventory is POST /resource_providers/{uuid}/inventories.
func (a *API) CreateInventory(r *middleware.Request) (*middleware.Response, error) {
	if _, err := a.guardedProvider(r, writes(policy.InventoryCreate)); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	doc, err := r.DecodeJSON(a.schemas.InventoryCreate())
	if err != nil {
		return nil, err
	}
	m := doc.(map[string]any)
	class, _ := m["resource_class"].(string)
	inv, err := inventoryFields(class, m)
	if err != nil {
		return nil, apierror.BadRequest("Bad inventory %s for resource provider %s: %s", class, uuid, err)
	}
	if err := checkCapacity(r, uuid, inv); err != nil {
		return nil, apierror.BadRequest("Unable to create inventory for resource provider %s: %s", uuid, err)
	}
	p, saved, err := a.store.AddInventory(r.Context(), uuid, inv)
	switch {
	case errors.Is(err, store.ErrDuplicate), errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Update conflict: %s", store.Detail(err))
	case errors.Is(err, store.ErrResourceClassNotFound):
		return nil, apierror.BadRequest("Unable to create inventory for resource provider %s: %s", uuid, store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	resp := inventoryResponse(p, saved, http.StatusCreated, sentRatio(m))
	resp.SetHeader("Location", absoluteURL(r, inventoryURL(uuid, class)))
	return resp, nil
}

// SetInventories is PUT /resource_providers/{uuid}/inventories: all of a
// provider's inventories at once.
func (a *API) SetInventories(r *middleware.Request) (*middleware.Response, error) {
	p, err := a.guardedProvider(r, writes(policy.InventoryUpdate))
	if err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	body, err := r.ReadRawBody()
	if err != nil {
		return nil, err
	}
	gen, invs, sent, err := decodeInventories(body, a.schemas.InventoriesReplace())
	if err != nil {
		return nil, err
	}
	if gen != p.Generation {
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "resource provider generation conflict")
	}
	if err := checkCapacity(r, uuid, invs...); err != nil {
		return nil, apierror.BadRequest("Unable to update inventory for resource provider %s: %s", uuid, err)
	}
	p, saved, err := a.store.SetInventories(r.Context(), uuid, gen, invs)
	switch {
	case errors.Is(err, store.ErrResourceClassNotFound):
		return nil, apierror.BadRequest("Unknown resource class in inventory for resource provider %s: %s", uuid, store.Detail(err))
	case errors.Is(err, store.ErrInventoryNotFound):
		return nil, apierror.Conflict(apierror.CodeDefault, "Race condition detected when setting inventory. No inventory record with resource class for resource provider %s: %s", uuid, store.Detail(err))
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", store.Detail(err))
	case errors.Is(err, store.ErrInventoryInUse):
		return nil, apierror.Conflict(apierror.CodeInventoryInUse, "update conflict: %s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return inventoriesResponse(r, p, saved, sent), nil
}

// UpdateInventory is PUT
// /resource_providers/{uuid}/inventories/{resource_class}.
func (a *API) UpdateInventory(r *middleware.Request) (*middleware.Response, error) {
	p, err := a.guardedProvider(r, writes(policy.InventoryUpdate))
	if err != nil {
		return nil, err
	}
	uuid, class := r.Param("uuid"), r.Param("resource_class")
	doc, err := r.DecodeJSON(a.schemas.InventoryUpdate())
	if err != nil {
		return nil, err
	}
	m := doc.(map[string]any)
	gen, err := jsonInt(m["resource_provider_generation"])
	if err != nil {
		return nil, apierror.BadRequest("JSON does not validate: %s", err)
	}
	if gen != p.Generation {
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "resource provider generation conflict")
	}
	inv, err := inventoryFields(class, m)
	if err != nil {
		return nil, apierror.BadRequest("Bad inventory %s for resource provider %s: %s", class, uuid, err)
	}
	if err := checkCapacity(r, uuid, inv); err != nil {
		return nil, apierror.BadRequest("Unable to update inventory for resource provider %s: %s", uuid, err)
	}
	p, saved, err := a.store.UpdateInventory(r.Context(), uuid, gen, inv)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", store.Detail(err))
	case errors.Is(err, store.ErrInventoryNotFound):
		return nil, apierror.BadRequest("No inventory record with resource class for resource provider %s: %s", uuid, store.Detail(err))
	case errors.Is(err, store.ErrResourceClassNotFound):
		// Upstream lets this escape its handler, which turns it into a 404
		// (without Vary, like every escaped NotFound).
		return nil, escape(apierror.NotFound("%s", store.Detail(err)))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return inventoryResponse(p, saved, http.StatusOK, sentRatio(m)), nil
}

// DeleteInventory is DELETE
// /resource_providers/{uuid}/inventories/{resource_class}.
func (a *API) DeleteInventory(r *middleware.Request) (*middleware.Response, error) {
	if _, err := a.guardedProvider(r, policyOnly(policy.InventoryDelete)); err != nil {
		return nil, err
	}
	uuid, class := r.Param("uuid"), r.Param("resource_class")
	err := a.store.DeleteInventory(r.Context(), uuid, class)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate), errors.Is(err, store.ErrInventoryInUse):
		// Upstream reports an in-use inventory with the concurrent update
		// code here (unlike PUT and DELETE of all inventories).
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Unable to delete inventory of class %s: %s", class, store.Detail(err))
	case errors.Is(err, store.ErrInventoryNotFound), errors.Is(err, store.ErrResourceClassNotFound):
		return nil, apierror.NotFound("No inventory of class %s found for delete: %s", class, store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return middleware.NoContent(), nil
}

// DeleteInventories is DELETE /resource_providers/{uuid}/inventories (1.5).
func (a *API) DeleteInventories(r *middleware.Request) (*middleware.Response, error) {
	if !r.At(microversion.DeleteAllInventories) {
		return nil, methodNotAllowedByVersion(r)
	}
	if _, err := a.guardedProvider(r, policyOnly(policy.InventoryDelete)); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	err := a.store.DeleteAllInventories(r.Context(), uuid)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Unable to delete inventory for resource provider %s because the inventory was updated by another process. Please retry your request.", uuid)
	case errors.Is(err, store.ErrInventoryInUse):
		return nil, apierror.Conflict(apierror.CodeInventoryInUse, "%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return middleware.NoContent(), nil
}

// methodNotAllowedByVersion is the bare 405 of upstream's version gate (no
// detail, no Allow header).
func methodNotAllowedByVersion(r *middleware.Request) *apierror.Error {
	return &apierror.Error{
		Status: http.StatusMethodNotAllowed,
		Raw:    true,
		Detail: "The method " + r.Method + " is not allowed for this resource. <br /><br />\n",
		Code:   apierror.CodeDefault,
	}
}
