package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// This file turns allocation request bodies (and, with reshaper.go, the
// reshaper's) into store requests. Upstream walks the decoded dicts in
// request order and reports the first offender in that order, so objects
// are decoded with their key order kept.

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
	err = jsonenc.EachMember(dec, func(key string) error {
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if _, dup := obj.vals[key]; !dup {
			obj.keys = append(obj.keys, key)
		}
		obj.vals[key] = val
		return nil
	})
	return obj, err
}

// members decodes every member of o with decode, in request order.
func members[T any](o jsonObject, decode func(key string, raw json.RawMessage) (T, error)) ([]T, error) {
	out := make([]T, 0, len(o.keys))
	for _, k := range o.keys {
		v, err := decode(k, o.vals[k])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// membersOf decodes each member of the object member key of o (absent is
// empty).
func membersOf[T any](o jsonObject, key string, decode func(key string, raw json.RawMessage) (T, error)) ([]T, error) {
	inner, err := o.object(key)
	if err != nil {
		return nil, err
	}
	return members(inner, decode)
}

// decodeMembers decodes the object raw and then each of its members.
func decodeMembers[T any](raw json.RawMessage, decode func(key string, raw json.RawMessage) (T, error)) ([]T, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	return members(obj, decode)
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

// decodeResources reads a {"CLASS": amount} object in request order.
func decodeResources(rpUUID string, raw json.RawMessage) ([]store.Allocation, error) {
	return decodeMembers(raw, func(rc string, amount json.RawMessage) (store.Allocation, error) {
		n, err := allocJSONInt(amount)
		if err != nil {
			return store.Allocation{}, fmt.Errorf("resources %s: %w", rc, err)
		}
		return store.Allocation{ProviderUUID: rpUUID, ResourceClass: rc, Used: n}, nil
	})
}

// decodeAllocationsDict reads the 1.12+ form {"RP": {"resources": {...}}}.
func decodeAllocationsDict(raw json.RawMessage) ([]store.Allocation, error) {
	byProvider, err := decodeMembers(raw, func(rp string, entry json.RawMessage) ([]store.Allocation, error) {
		obj, err := decodeObject(entry)
		if err != nil {
			return nil, err
		}
		return decodeResources(rp, obj.vals["resources"])
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(byProvider...), nil
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
	return decodeMembers(raw, func(c string, doc json.RawMessage) (store.ConsumerAllocations, error) {
		return decodeConsumerAllocations(c, doc, mv)
	})
}
