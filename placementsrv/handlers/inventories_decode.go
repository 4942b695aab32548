package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// decodeInventories reads a PUT /resource_providers/{uuid}/inventories
// body: it checks syntax and schema (keeping the request's key order for
// jsonschema-identical messages) and returns the generation, the
// inventories, in request order, with defaults applied, and the allocation
// ratios as sent (see sentRatio). Errors are *apierror.Error 400s.
func decodeInventories(body []byte, sch *jsonschema.Schema) (int64, []store.Inventory, map[string]string, error) {
	doc, err := middleware.ParseJSON(body)
	if err != nil {
		return 0, nil, nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := sch.ValidateDecoded(context.Background(), doc, body); err != nil {
		return 0, nil, nil, apierror.BadRequest("JSON does not validate: %s", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return 0, nil, nil, apierror.BadRequest("JSON does not validate: the body must be an object")
	}
	gen, err := jsonInt(m["resource_provider_generation"])
	if err != nil {
		return 0, nil, nil, apierror.BadRequest("JSON does not validate: resource_provider_generation: %s", err)
	}
	byClass, ok := m["inventories"].(map[string]any)
	if !ok {
		return 0, nil, nil, apierror.BadRequest("JSON does not validate: inventories must be an object")
	}
	order, err := inventoryKeyOrder(body)
	if err != nil {
		return 0, nil, nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	invs := make([]store.Inventory, 0, len(byClass))
	sent := map[string]string{}
	for _, class := range order {
		raw, ok := byClass[class].(map[string]any)
		if !ok {
			return 0, nil, nil, apierror.BadRequest("Bad inventory %s: the inventory must be an object", class)
		}
		inv, err := inventoryFields(class, raw)
		if err != nil {
			return 0, nil, nil, apierror.BadRequest("Bad inventory %s: %s", class, err)
		}
		invs = append(invs, inv)
		if lit := sentRatio(raw); lit != "" {
			sent[class] = lit
		}
	}
	return gen, invs, sent, nil
}

// inventoryKeyOrder returns the keys of the top-level "inventories" object
// in the order they first appear (Python dicts keep insertion order, and
// upstream reports the first bad class in that order).
func inventoryKeyOrder(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("expected an object")
	}
	var order []string
	err := jsonenc.EachMember(dec, func(key string) error {
		if key != "inventories" {
			return skipValue(dec)
		}
		var err error
		order, err = objectKeys(dec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return order, nil
}

// skipValue consumes one value from dec.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}

// objectKeys reads one object from dec and returns its distinct keys in
// first-appearance order.
func objectKeys(dec *json.Decoder) ([]string, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("expected an object")
	}
	seen := map[string]bool{}
	var keys []string
	err = jsonenc.EachMember(dec, func(key string) error {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
		return skipValue(dec)
	})
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return keys, nil
}

// inventoryFields reads an inventory body already checked by the schema:
// omitted fields take Placement's defaults.
func inventoryFields(class string, m map[string]any) (store.Inventory, error) {
	inv := store.Inventory{ResourceClass: class, InventoryAmounts: store.InventoryAmounts{
		Reserved:        store.DefaultReserved,
		MinUnit:         store.DefaultMinUnit,
		MaxUnit:         store.DefaultMaxUnit,
		StepSize:        store.DefaultStepSize,
		AllocationRatio: store.DefaultAllocationRatio,
	}}
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

// sentRatio returns the allocation_ratio of an inventory body when the
// client wrote it as an integer ("1", "16"), else "". Upstream answers a
// write with the number as Python parsed it: an int stays an int ("1"),
// a float prints as its repr ("1.5", "1.0" for 1.0 or 1e0); reads show
// the stored float.
func sentRatio(m map[string]any) string {
	n, ok := m["allocation_ratio"].(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return ""
	}
	var i big.Int
	if _, ok := i.SetString(string(n), 10); !ok {
		return ""
	}
	return i.String()
}
