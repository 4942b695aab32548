package placementsrv

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// pyFloat renders like Python's float repr, so allocation ratios read
// "1.0" rather than "1" as upstream's JSON does.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("cannot encode %v as JSON", v)
	}
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		return []byte(strconv.FormatFloat(v, 'e', -1, 64)), nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// inventoryJSON is one inventory as the API shows it, fields in upstream's
// order.
type inventoryJSON struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio pyFloat `json:"allocation_ratio"`
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
		AllocationRatio: pyFloat(inv.AllocationRatio),
		Generation:      generation,
	}
}

// inventoriesResponse renders a provider's inventories; Last-Modified is
// the newest inventory's, and absent (with Cache-Control kept) when there
// is none, as upstream.
func inventoriesResponse(r *request, p store.Provider, invs []store.Inventory) *response {
	byClass := make(map[string]inventoryJSON, len(invs))
	var modified time.Time
	for _, inv := range invs {
		byClass[inv.ResourceClass] = serializeInventory(inv, 0)
		modified = latest(modified, lastModified(inv.CreatedAt, inv.UpdatedAt))
	}
	resp := ok(map[string]any{"resource_provider_generation": p.Generation, "inventories": byClass})
	if len(invs) == 0 {
		if r.at(microversion.CacheHeaders) {
			resp.setHeader("Cache-Control", "no-cache")
		}
		return resp
	}
	return resp.withLastModified(modified)
}

func inventoryResponse(p store.Provider, inv store.Inventory, status int) *response {
	resp := ok(serializeInventory(inv, p.Generation)).withLastModified(lastModified(inv.CreatedAt, inv.UpdatedAt))
	resp.status = status
	return resp
}

// absoluteURL makes a Location header value the way webob does: scheme and
// host of the request plus path.
func absoluteURL(r *request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

func inventoryURL(uuid, class string) string {
	return providerURL(uuid) + "/inventories/" + class
}

// inventoryFields reads an inventory body already checked by the schema:
// omitted fields take Placement's defaults.
func inventoryFields(class string, m map[string]any) (store.Inventory, error) {
	inv := store.Inventory{
		ResourceClass:   class,
		Reserved:        store.DefaultReserved,
		MinUnit:         store.DefaultMinUnit,
		MaxUnit:         store.DefaultMaxUnit,
		StepSize:        store.DefaultStepSize,
		AllocationRatio: store.DefaultAllocationRatio,
	}
	if _, has := m["total"]; !has {
		return inv, fmt.Errorf("'total' is a required property")
	}
	ints := []struct {
		key string
		dst *int64
	}{
		{"total", &inv.Total},
		{"reserved", &inv.Reserved},
		{"min_unit", &inv.MinUnit},
		{"max_unit", &inv.MaxUnit},
		{"step_size", &inv.StepSize},
	}
	for _, f := range ints {
		v, has := m[f.key]
		if !has {
			continue
		}
		n, err := jsonInt(v)
		if err != nil {
			return inv, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = n
	}
	if v, has := m["allocation_ratio"]; has {
		n, ok := v.(json.Number)
		if !ok {
			return inv, fmt.Errorf("allocation_ratio: %v is not a number", v)
		}
		f, err := n.Float64()
		if err != nil {
			return inv, fmt.Errorf("allocation_ratio: %w", err)
		}
		inv.AllocationRatio = f
	}
	return inv, nil
}

// jsonInt reads a JSON integer, accepting an integral float (5.0) as
// Python's jsonschema does.
func jsonInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	return int64(f), nil
}

// checkCapacity rejects inventories whose capacity is negative, or zero
// before microversion 1.26, in upstream's words.
func checkCapacity(r *request, uuid string, invs ...store.Inventory) error {
	for _, inv := range invs {
		c := inv.Capacity()
		if r.at(microversion.ReservedEqualTotal) {
			if c < 0 {
				return fmt.Errorf("Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than total.", inv.ResourceClass, uuid)
			}
		} else if c <= 0 {
			return fmt.Errorf("Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than or equal to total.", inv.ResourceClass, uuid)
		}
	}
	return nil
}

// lookupProviderForWrite loads the provider as upstream's write handlers
// do first: a missing one is a plain 404.
func (s *Server) lookupProviderForWrite(r *request, uuid string) (store.Provider, error) {
	p, err := s.store.GetProvider(r.Context(), uuid)
	if err != nil {
		return p, providerNotFound(err, uuid)
	}
	return p, nil
}

// providerNotFoundTwice is the 404 of the GET handlers, which repeat the
// store's message after their own.
func providerNotFoundTwice(err error, uuid, sep string) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierror.NotFound("No resource provider with uuid %s found%s %s", uuid, sep, store.Detail(err))
	}
	return err
}

func (s *Server) getInventories(r *request) (*response, error) {
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyInventoryList); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	p, invs, err := s.store.GetInventories(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFoundTwice(err, uuid, " :")
	}
	return inventoriesResponse(r, p, invs), nil
}

func (s *Server) getInventory(r *request) (*response, error) {
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyInventoryShow); err != nil {
		return nil, err
	}
	uuid, class := r.param("uuid"), r.param("resource_class")
	p, invs, err := s.store.GetInventories(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFoundTwice(err, uuid, " :")
	}
	for _, inv := range invs {
		if inv.ResourceClass == class {
			return inventoryResponse(p, inv, http.StatusOK), nil
		}
	}
	return nil, apierror.NotFound("No inventory of class %s for %s", class, uuid)
}

func (s *Server) createInventory(r *request) (*response, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyInventoryCreate); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	if _, err := s.lookupProviderForWrite(r, uuid); err != nil {
		return nil, err
	}
	doc, err := r.decodeJSON(s.schemas.InventoryCreate())
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
	p, saved, err := s.store.AddInventory(r.Context(), uuid, inv)
	switch {
	case errors.Is(err, store.ErrDuplicate), errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Update conflict: %s", store.Detail(err))
	case errors.Is(err, store.ErrResourceClassNotFound):
		return nil, apierror.BadRequest("Unable to create inventory for resource provider %s: %s", uuid, store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	resp := inventoryResponse(p, saved, http.StatusCreated)
	resp.setHeader("Location", absoluteURL(r, inventoryURL(uuid, class)))
	return resp, nil
}

func (s *Server) setInventories(r *request) (*response, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyInventoryUpdate); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	p, err := s.lookupProviderForWrite(r, uuid)
	if err != nil {
		return nil, err
	}
	body, err := r.readRawBody()
	if err != nil {
		return nil, err
	}
	gen, invs, err := decodeInventories(body, s.schemas.InventoriesReplace())
	if err != nil {
		return nil, err
	}
	if gen != p.Generation {
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "resource provider generation conflict")
	}
	if err := checkCapacity(r, uuid, invs...); err != nil {
		return nil, apierror.BadRequest("Unable to update inventory for resource provider %s: %s", uuid, err)
	}
	p, saved, err := s.store.SetInventories(r.Context(), uuid, gen, invs)
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
	return inventoriesResponse(r, p, saved), nil
}

func (s *Server) updateInventory(r *request) (*response, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyInventoryUpdate); err != nil {
		return nil, err
	}
	uuid, class := r.param("uuid"), r.param("resource_class")
	p, err := s.lookupProviderForWrite(r, uuid)
	if err != nil {
		return nil, err
	}
	doc, err := r.decodeJSON(s.schemas.InventoryUpdate())
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
	p, saved, err := s.store.UpdateInventory(r.Context(), uuid, gen, inv)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", store.Detail(err))
	case errors.Is(err, store.ErrInventoryNotFound):
		return nil, apierror.BadRequest("No inventory record with resource class for resource provider %s: %s", uuid, store.Detail(err))
	case errors.Is(err, store.ErrResourceClassNotFound):
		// Upstream lets this escape its handler, which turns it into a 404.
		return nil, apierror.NotFound("%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return inventoryResponse(p, saved, http.StatusOK), nil
}

func (s *Server) deleteInventory(r *request) (*response, error) {
	if err := r.authorize(policyInventoryDelete); err != nil {
		return nil, err
	}
	uuid, class := r.param("uuid"), r.param("resource_class")
	if _, err := s.lookupProviderForWrite(r, uuid); err != nil {
		return nil, err
	}
	err := s.store.DeleteInventory(r.Context(), uuid, class)
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
	return noContent(), nil
}

func (s *Server) deleteInventories(r *request) (*response, error) {
	if !r.at(microversion.DeleteAllInventories) {
		return nil, methodNotAllowedByVersion(r)
	}
	if err := r.authorize(policyInventoryDelete); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	if _, err := s.lookupProviderForWrite(r, uuid); err != nil {
		return nil, err
	}
	err := s.store.DeleteAllInventories(r.Context(), uuid)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Unable to delete inventory for resource provider %s because the inventory was updated by another process. Please retry your request.", uuid)
	case errors.Is(err, store.ErrInventoryInUse):
		return nil, apierror.Conflict(apierror.CodeInventoryInUse, "%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return noContent(), nil
}

// methodNotAllowedByVersion is the bare 405 of upstream's version gate (no
// detail, no Allow header).
func methodNotAllowedByVersion(r *request) *apierror.Error {
	return &apierror.Error{
		Status: http.StatusMethodNotAllowed,
		Raw:    true,
		Detail: "The method " + r.Method + " is not allowed for this resource. <br /><br />\n",
		Code:   apierror.CodeDefault,
	}
}
