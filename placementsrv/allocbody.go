package placementsrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// This file turns allocation and reshaper request bodies into store
// requests. Upstream walks the decoded dicts in request order and reports
// the first offender in that order, so objects are decoded with their key
// order kept.

// maxUnitDefault is the max_unit an inventory gets when none is given
// (placement db constants MAX_INT).
const maxUnitDefault = math.MaxInt32

// readValidated reads the body and validates it against sch, with
// upstream's messages: "Malformed JSON: ..." and "JSON does not
// validate: ...". The content type must have been checked already.
func (r *request) readValidated(sch *schema.Schema) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierror.Errorf(http.StatusRequestEntityTooLarge, "request body too large")
	}
	return validateBody(body, sch)
}

// validateBody checks that body is one JSON value conforming to sch.
func validateBody(body []byte, sch *schema.Schema) ([]byte, error) {
	if _, err := parseJSON(body); err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if sch != nil {
		if err := sch.ValidateJSON(body); err != nil {
			var ve *schema.ValidationError
			if errors.As(err, &ve) {
				return nil, apierror.BadRequest("JSON does not validate: %s", err)
			}
			return nil, apierror.BadRequest("Malformed JSON: %s", err)
		}
	}
	return body, nil
}

// jsonObject is a JSON object with its keys in request order; a repeated
// key keeps its first position and its last value, as Python's dict.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

func decodeObject(raw json.RawMessage) (jsonObject, error) {
	obj := jsonObject{vals: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return obj, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return obj, fmt.Errorf("expected an object, got %s", raw)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return obj, err
		}
		key, ok := tok.(string)
		if !ok {
			return obj, errors.New("expected an object key")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return obj, err
		}
		if _, dup := obj.vals[key]; !dup {
			obj.keys = append(obj.keys, key)
		}
		obj.vals[key] = val
	}
	return obj, nil
}

// has reports whether key is present (even with a null value).
func (o jsonObject) has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// object decodes the member key as an object; absent is empty.
func (o jsonObject) object(key string) (jsonObject, error) {
	raw, ok := o.vals[key]
	if !ok {
		return jsonObject{vals: map[string]json.RawMessage{}}, nil
	}
	return decodeObject(raw)
}

// str decodes the member key as a string; absent or null is "".
func (o jsonObject) str(key string) (string, error) {
	raw, ok := o.vals[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// optInt decodes the member key as an integer; absent or null is nil.
func (o jsonObject) optInt(key string) (*int64, error) {
	raw, ok := o.vals[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	n, err := allocJSONInt(raw)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// intOr decodes the member key as an integer, or returns def when absent.
func (o jsonObject) intOr(key string, def int64) (int64, error) {
	raw, ok := o.vals[key]
	if !ok {
		return def, nil
	}
	return allocJSONInt(raw)
}

// floatOr decodes the member key as a number, or returns def when absent.
func (o jsonObject) floatOr(key string, def float64) (float64, error) {
	raw, ok := o.vals[key]
	if !ok {
		return def, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	return strconv.ParseFloat(n.String(), 64)
}

// allocJSONInt reads an integer as jsonschema's "integer" admits it: a whole
// number, possibly written as a float (1.0). Values beyond int64 are
// clamped; they fail every inventory limit anyway.
func allocJSONInt(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, nil
	case f <= math.MinInt64:
		return math.MinInt64, nil
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	return int64(f), nil
}

// decodeResources reads a {"CLASS": amount} object in request order.
func decodeResources(rpUUID string, raw json.RawMessage) ([]store.Allocation, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	out := make([]store.Allocation, 0, len(obj.keys))
	for _, rc := range obj.keys {
		n, err := allocJSONInt(obj.vals[rc])
		if err != nil {
			return nil, fmt.Errorf("resources %s: %w", rc, err)
		}
		out = append(out, store.Allocation{ProviderUUID: rpUUID, ResourceClass: rc, Used: n})
	}
	return out, nil
}

// decodeAllocationsDict reads the 1.12+ form {"RP": {"resources": {...}}}.
func decodeAllocationsDict(raw json.RawMessage) ([]store.Allocation, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	var out []store.Allocation
	for _, rp := range obj.keys {
		entry, err := decodeObject(obj.vals[rp])
		if err != nil {
			return nil, err
		}
		res, err := decodeResources(rp, entry.vals["resources"])
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

// decodeAllocationsList reads the pre-1.12 list form. Upstream turns it
// into a dict by provider, so a repeated provider keeps its first position
// and its last resources.
func decodeAllocationsList(raw json.RawMessage) ([]store.Allocation, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	var order []string
	byRP := map[string]json.RawMessage{}
	for _, item := range items {
		obj, err := decodeObject(item)
		if err != nil {
			return nil, err
		}
		rp, err := obj.object("resource_provider")
		if err != nil {
			return nil, err
		}
		uuid, err := rp.str("uuid")
		if err != nil {
			return nil, err
		}
		if _, seen := byRP[uuid]; !seen {
			order = append(order, uuid)
		}
		byRP[uuid] = obj.vals["resources"]
	}
	var out []store.Allocation
	for _, uuid := range order {
		res, err := decodeResources(uuid, byRP[uuid])
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

// decodeConsumerAllocations reads one consumer's allocations document (the
// PUT body, or one value of the POST body) for microversion mv.
func decodeConsumerAllocations(consumerUUID string, raw json.RawMessage, mv microversion.Version) (store.ConsumerAllocations, error) {
	out := store.ConsumerAllocations{ConsumerUUID: consumerUUID}
	obj, err := decodeObject(raw)
	if err != nil {
		return out, err
	}
	if mv.AtLeast(microversion.AllocationsDict) {
		out.Allocations, err = decodeAllocationsDict(obj.vals["allocations"])
	} else {
		out.Allocations, err = decodeAllocationsList(obj.vals["allocations"])
	}
	if err != nil {
		return out, err
	}
	if obj.has("project_id") && string(obj.vals["project_id"]) != "null" {
		if out.ProjectID, err = obj.str("project_id"); err != nil {
			return out, err
		}
		if out.UserID, err = obj.str("user_id"); err != nil {
			return out, err
		}
	} else {
		out.ProjectID, out.UserID = store.IncompleteConsumerID, store.IncompleteConsumerID
	}
	if mv.AtLeast(microversion.ConsumerGeneration) {
		out.CheckGeneration = true
		if out.Generation, err = obj.optInt("consumer_generation"); err != nil {
			return out, err
		}
	}
	if mv.AtLeast(microversion.ConsumerTypes) {
		if out.ConsumerType, err = obj.str("consumer_type"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// decodeConsumersDict reads the POST /allocations form {"CONSUMER": {...}}.
func decodeConsumersDict(raw json.RawMessage, mv microversion.Version) ([]store.ConsumerAllocations, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	out := make([]store.ConsumerAllocations, 0, len(obj.keys))
	for _, c := range obj.keys {
		ca, err := decodeConsumerAllocations(c, obj.vals[c], mv)
		if err != nil {
			return nil, err
		}
		out = append(out, ca)
	}
	return out, nil
}

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

// consumerUUIDLike mirrors oslo's is_uuid_like followed by str(UUID(v)):
// braces, "urn:" and "uuid:" prefixes, dashes and case are tolerated, and
// the result is the canonical form.
func consumerUUIDLike(v string) (string, bool) {
	h := strings.ReplaceAll(strings.ReplaceAll(v, "urn:", ""), "uuid:", "")
	h = strings.ReplaceAll(strings.Trim(h, "{}"), "-", "")
	if len(h) != 32 {
		return "", false
	}
	h = strings.ToLower(h)
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}
