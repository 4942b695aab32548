package placementsrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// readRawBody enforces the JSON content type and returns the body bytes,
// for handlers that need more than decodeJSON's generic document (such as
// the key order of an object).
func (r *request) readRawBody() ([]byte, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierror.Errorf(http.StatusRequestEntityTooLarge, "request body too large")
	}
	return body, nil
}

// decodeInventories reads a PUT /resource_providers/{uuid}/inventories
// body: it checks syntax and schema (keeping the request's key order for
// jsonschema-identical messages) and returns the generation and the
// inventories, in request order, with defaults applied. Errors are
// *apierror.Error 400s.
func decodeInventories(body []byte, sch *schema.Schema) (int64, []store.Inventory, error) {
	doc, err := parseJSON(body)
	if err != nil {
		return 0, nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := sch.ValidateJSON(body); err != nil {
		return 0, nil, apierror.BadRequest("JSON does not validate: %s", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return 0, nil, apierror.BadRequest("JSON does not validate: the body must be an object")
	}
	gen, err := jsonInt(m["resource_provider_generation"])
	if err != nil {
		return 0, nil, apierror.BadRequest("JSON does not validate: resource_provider_generation: %s", err)
	}
	byClass, ok := m["inventories"].(map[string]any)
	if !ok {
		return 0, nil, apierror.BadRequest("JSON does not validate: inventories must be an object")
	}
	order, err := inventoryKeyOrder(body)
	if err != nil {
		return 0, nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	invs := make([]store.Inventory, 0, len(byClass))
	for _, class := range order {
		raw, ok := byClass[class].(map[string]any)
		if !ok {
			return 0, nil, apierror.BadRequest("Bad inventory %s: the inventory must be an object", class)
		}
		inv, err := inventoryFields(class, raw)
		if err != nil {
			return 0, nil, apierror.BadRequest("Bad inventory %s: %s", class, err)
		}
		invs = append(invs, inv)
	}
	return gen, invs, nil
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
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if key != "inventories" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		order, err = objectKeys(dec)
		if err != nil {
			return nil, err
		}
	}
	return order, nil
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
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return keys, nil
}
