package schema

import (
	"fmt"
	"math/big"
)

// This file defines Placement 8.0.0's request schemas. Later microversions
// are derived from earlier ones by deep copy and modification, as upstream
// does, because the resulting key order (kept by object) decides which of
// several errors is reported.

// Patterns shared by several schemas (placement/schemas/common.py).
const (
	uuidPattern            = "^[0-9a-fA-F-]{36}$"
	rcPattern              = "^[A-Z0-9_]+$"
	customPattern          = "^CUSTOM_[A-Z0-9_]+$"
	consumerTypePattern    = rcPattern
	consumerTypeGetPattern = consumerTypePattern + "|^all|^unknown$"
	groupPat               = "[1-9][0-9]*"
	groupPat133            = "[a-zA-Z0-9_-]{1,64}"
)

// Limits from placement/db/constants.py.
const (
	maxInt        = 0x7FFFFFFF
	sqlSPFloatMax = 3.40282e+38
)

// obj builds an ordered object from key/value pairs, converting Go ints and
// floats to Python-typed numbers and []string to lists.
func obj(kv ...any) *object {
	o := newObject()
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), lit(kv[i+1]))
	}
	return o
}

func lit(v any) any {
	switch t := v.(type) {
	case int:
		return &number{i: big.NewInt(int64(t))}
	case float64:
		return floatNum(t)
	case []string:
		l := make([]any, len(t))
		for i, s := range t {
			l[i] = s
		}
		return l
	}
	return v
}

// at walks nested objects by key, like schema['properties']['x'] in Python.
func at(o *object, keys ...string) *object {
	for _, k := range keys {
		o = o.m[k].(*object)
	}
	return o
}

func clone(o *object) *object { return deepCopy(o).(*object) }

// appendRequired is schema['required'].append/extend.
func appendRequired(o *object, names ...string) {
	old, _ := o.m["required"].([]any)
	l := append([]any(nil), old...)
	for _, n := range names {
		l = append(l, n)
	}
	o.set("required", l)
}

// removeRequired is schema['required'].remove(name).
func removeRequired(o *object, name string) {
	old := o.m["required"].([]any)
	for i, v := range old {
		if v == name {
			l := append(append([]any(nil), old[:i]...), old[i+1:]...)
			o.set("required", l)
			return
		}
	}
}

// Set holds every compiled Placement request schema. Build it once with New
// and share it; it is read-only.
type Set struct {
	providerCreate, providerCreate14 *Schema
	providerUpdate, providerUpdate14 *Schema
	providerList                     map[int]*Schema // keyed by introducing minor

	inventoryCreate, inventoryUpdate, inventoriesReplace *Schema

	resourceClassCreate, resourceClassUpdate *Schema

	customTrait, traitsPut, providerTraitsSet, traitListQuery *Schema

	aggregates, aggregates19 *Schema

	allocationsPut  map[int]*Schema
	allocationsPost map[int]*Schema
	reshaper        map[int]*Schema
	usages          map[int]*Schema
	candidates      map[int]*Schema
}

// New compiles all Placement schemas. It panics only if the built-in
// definitions are broken, which the package tests rule out.
func New() *Set {
	must := func(v *object) *Schema {
		s, err := compileValue(v)
		if err != nil {
			panic(fmt.Sprintf("placement schema does not compile: %v", err))
		}
		return s
	}
	mustAll := func(m map[int]*object) map[int]*Schema {
		out := make(map[int]*Schema, len(m))
		for k, v := range m {
			out[k] = must(v)
		}
		return out
	}

	s := &Set{}

	// Resource providers.
	rpPost := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string", "maxLength", 200),
			"uuid", obj("type", "string", "format", "uuid"),
		),
		"required", []string{"name"},
		"additionalProperties", false,
	)
	rpPut := clone(rpPost)
	at(rpPut, "properties").del("uuid")
	rpPost14 := clone(rpPost)
	at(rpPost14, "properties").put("parent_provider_uuid", obj(
		"anyOf", []any{
			obj("type", "string", "format", "uuid"),
			obj("type", "null"),
		},
	))
	rpPut14 := clone(rpPost14)
	at(rpPut14, "properties").del("uuid")
	s.providerCreate, s.providerCreate14 = must(rpPost), must(rpPost14)
	s.providerUpdate, s.providerUpdate14 = must(rpPut), must(rpPut14)

	rpList := map[int]*object{0: obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string"),
			"uuid", obj("type", "string", "format", "uuid"),
		),
		"additionalProperties", false,
	)}
	rpList[3] = clone(rpList[0])
	at(rpList[3], "properties").put("member_of", obj("type", "string"))
	rpList[4] = clone(rpList[3])
	at(rpList[4], "properties").put("resources", obj("type", "string"))
	rpList[14] = clone(rpList[4])
	at(rpList[14], "properties").put("in_tree", obj("type", "string", "format", "uuid"))
	rpList[18] = clone(rpList[14])
	at(rpList[18], "properties").put("required", obj("type", "string"))
	s.providerList = mustAll(rpList)

	// Inventories.
	invBase := obj(
		"type", "object",
		"properties", obj(
			"resource_provider_generation", obj("type", "integer"),
			"total", obj("type", "integer", "maximum", maxInt, "minimum", 1),
			"reserved", obj("type", "integer", "maximum", maxInt, "minimum", 0),
			"min_unit", obj("type", "integer", "maximum", maxInt, "minimum", 1),
			"max_unit", obj("type", "integer", "maximum", maxInt, "minimum", 1),
			"step_size", obj("type", "integer", "maximum", maxInt, "minimum", 1),
			"allocation_ratio", obj("type", "number", "maximum", sqlSPFloatMax),
		),
		"required", []string{"total", "resource_provider_generation"},
		"additionalProperties", false,
	)
	invPost := clone(invBase)
	at(invPost, "properties").put("resource_class", obj("type", "string", "pattern", rcPattern))
	appendRequired(invPost, "resource_class")
	removeRequired(invPost, "resource_provider_generation")
	invRecord := clone(invBase)
	removeRequired(invRecord, "resource_provider_generation")
	invPut := obj(
		"type", "object",
		"properties", obj(
			"resource_provider_generation", obj("type", "integer"),
			"inventories", obj(
				"type", "object",
				"patternProperties", obj(rcPattern, invRecord),
			),
		),
		"required", []string{"resource_provider_generation", "inventories"},
		"additionalProperties", false,
	)
	s.inventoryCreate, s.inventoryUpdate, s.inventoriesReplace = must(invPost), must(invBase), must(invPut)

	// Resource classes.
	rcPost := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string", "pattern", customPattern, "maxLength", 255),
		),
		"required", []string{"name"},
		"additionalProperties", false,
	)
	s.resourceClassCreate, s.resourceClassUpdate = must(rcPost), must(clone(rcPost))

	// Traits.
	trait := obj("type", "string", "minLength", 1, "maxLength", 255)
	customTrait := clone(trait)
	customTrait.put("pattern", customPattern)
	traitsPut := obj(
		"type", "object",
		"properties", obj(
			"traits", obj("type", "array", "items", customTrait),
		),
		"required", []string{"traits"},
		"additionalProperties", false,
	)
	rpTraits := clone(traitsPut)
	at(rpTraits, "properties", "traits").put("items", clone(trait))
	at(rpTraits, "properties").put("resource_provider_generation", obj("type", "integer"))
	appendRequired(rpTraits, "resource_provider_generation")
	traitList := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string"),
			"associated", obj("type", "string"),
		),
		"additionalProperties", false,
	)
	s.customTrait, s.traitsPut = must(customTrait), must(traitsPut)
	s.providerTraitsSet, s.traitListQuery = must(rpTraits), must(traitList)

	// Aggregates.
	aggList := obj(
		"type", "array",
		"items", obj("type", "string", "format", "uuid"),
		"uniqueItems", true,
	)
	agg19 := obj(
		"type", "object",
		"properties", obj(
			"aggregates", clone(aggList),
			"resource_provider_generation", obj("type", "integer"),
		),
		"required", []string{"aggregates", "resource_provider_generation"},
		"additionalProperties", false,
	)
	s.aggregates, s.aggregates19 = must(clone(aggList)), must(agg19)

	// Allocations.
	resources := func() *object {
		return obj(
			"type", "object",
			"minProperties", 1,
			"patternProperties", obj(rcPattern, obj("type", "integer", "minimum", 1)),
			"additionalProperties", false,
		)
	}
	idString := func() *object { return obj("type", "string", "minLength", 1, "maxLength", 255) }
	put := map[int]*object{0: obj(
		"type", "object",
		"properties", obj(
			"allocations", obj(
				"type", "array",
				"minItems", 1,
				"items", obj(
					"type", "object",
					"properties", obj(
						"resource_provider", obj(
							"type", "object",
							"properties", obj("uuid", obj("type", "string", "format", "uuid")),
							"additionalProperties", false,
							"required", []string{"uuid"},
						),
						"resources", resources(),
					),
					"required", []string{"resource_provider", "resources"},
					"additionalProperties", false,
				),
			),
		),
		"required", []string{"allocations"},
		"additionalProperties", false,
	)}
	put[8] = clone(put[0])
	at(put[8], "properties").put("project_id", idString())
	at(put[8], "properties").put("user_id", idString())
	appendRequired(put[8], "project_id", "user_id")
	put[12] = obj(
		"type", "object",
		"properties", obj(
			"allocations", obj(
				"type", "object",
				"minProperties", 1,
				"patternProperties", obj(uuidPattern, obj(
					"type", "object",
					"properties", obj(
						"generation", obj("type", "integer"),
						"resources", resources(),
					),
					"required", []string{"resources"},
					"additionalProperties", false,
				)),
				"additionalProperties", false,
			),
			"project_id", idString(),
			"user_id", idString(),
		),
		"additionalProperties", false,
		"required", []string{"allocations", "project_id", "user_id"},
	)
	// Allocations may be emptied (to delete them) in the POST and later PUT forms.
	deletable := clone(put[12])
	at(deletable, "properties", "allocations").put("minProperties", 0)
	consumerGeneration := func() *object {
		return obj("type", []string{"integer", "null"}, "additionalProperties", false)
	}
	post := map[int]*object{13: obj(
		"type", "object",
		"minProperties", 1,
		"additionalProperties", false,
		"patternProperties", obj(uuidPattern, deletable),
	)}
	put[28] = clone(deletable)
	at(put[28], "properties").put("consumer_generation", consumerGeneration())
	appendRequired(put[28], "consumer_generation")
	postConsumer28 := clone(deletable)
	at(postConsumer28, "properties").put("consumer_generation", consumerGeneration())
	appendRequired(postConsumer28, "consumer_generation")
	post[28] = clone(post[13])
	post[28].put("patternProperties", obj(uuidPattern, postConsumer28))
	mappings := obj(
		"type", "object",
		"minProperties", 1,
		"patternProperties", obj(groupPat133, obj(
			"type", "array",
			"minItems", 1,
			"items", obj("type", "string", "format", "uuid"),
		)),
	)
	put[34] = clone(put[28])
	at(put[34], "properties").put("mappings", mappings)
	post[34] = clone(post[28])
	post[34].put("patternProperties", obj(uuidPattern, put[34]))
	put[38] = clone(put[34])
	at(put[38], "properties").put("consumer_type", obj(
		"type", "string",
		"pattern", consumerTypePattern,
		"minLength", 1,
		"maxLength", 255,
	))
	appendRequired(put[38], "consumer_type")
	post[38] = clone(post[34])
	post[38].put("patternProperties", obj(uuidPattern, put[38]))
	s.allocationsPut, s.allocationsPost = mustAll(put), mustAll(post)

	// Reshaper: inventories per provider plus POST /allocations-style
	// allocations that may be empty.
	reshaperAllocs := func(p *object) *object {
		a := clone(p)
		a.put("minProperties", 0)
		return a
	}
	reshape := map[int]*object{30: obj(
		"type", "object",
		"properties", obj(
			"inventories", obj(
				"type", "object",
				"patternProperties", obj(uuidPattern, invPut),
				"minProperties", 1,
				"additionalProperties", false,
			),
			"allocations", reshaperAllocs(post[28]),
		),
		"required", []string{"inventories", "allocations"},
		"additionalProperties", false,
	)}
	reshape[34] = clone(reshape[30])
	at(reshape[34], "properties").put("allocations", reshaperAllocs(post[34]))
	reshape[38] = clone(reshape[34])
	at(reshape[38], "properties").put("allocations", reshaperAllocs(post[38]))
	s.reshaper = mustAll(reshape)

	// Usages.
	usages := map[int]*object{9: obj(
		"type", "object",
		"properties", obj(
			"project_id", idString(),
			"user_id", idString(),
		),
		"required", []string{"project_id"},
		"additionalProperties", false,
	)}
	usages[38] = clone(usages[9])
	at(usages[38], "properties").put("consumer_type", obj(
		"type", "string",
		"pattern", consumerTypeGetPattern,
		"minLength", 1,
		"maxLength", 255,
	))
	s.usages = mustAll(usages)

	// Allocation candidates.
	ac := map[int]*object{10: obj(
		"type", "object",
		"properties", obj("resources", obj("type", "string")),
		"required", []string{"resources"},
		"additionalProperties", false,
	)}
	ac[16] = clone(ac[10])
	at(ac[16], "properties").put("limit", obj(
		// Query values are always strings; integer is accepted too.
		"type", []string{"integer", "string"},
		"pattern", "^[1-9][0-9]*$",
		"minimum", 1,
		"minLength", 1,
	))
	ac[17] = clone(ac[16])
	at(ac[17], "properties").put("required", obj("type", []string{"string"}))
	ac[21] = clone(ac[17])
	at(ac[21], "properties").put("member_of", obj("type", []string{"string"}))
	ac[25] = clone(ac[21])
	at(ac[25], "properties").del("resources")
	ac[25].del("required")
	at(ac[25], "properties").del("required")
	at(ac[25], "properties").del("member_of")
	grouped := func(group, name string) string { return "^" + name + "(" + group + ")?$" }
	ac[25].put("patternProperties", obj(
		grouped(groupPat, "resources"), obj("type", "string"),
		grouped(groupPat, "required"), obj("type", "string"),
		grouped(groupPat, "member_of"), obj("type", "string"),
	))
	at(ac[25], "properties").put("group_policy", obj(
		"type", "string",
		"enum", []string{"none", "isolate"},
	))
	ac[31] = clone(ac[25])
	at(ac[31], "patternProperties").put(grouped(groupPat, "in_tree"), obj("type", "string"))
	ac[33] = clone(ac[31])
	pp33 := newObject()
	for _, name := range []string{"resources", "required", "member_of", "in_tree"} {
		pp33.put(grouped(groupPat133, name), obj("type", "string"))
	}
	ac[33].put("patternProperties", pp33)
	ac[35] = clone(ac[33])
	at(ac[35], "properties").put("root_required", obj("type", []string{"string"}))
	ac[36] = clone(ac[35])
	at(ac[36], "properties").put("same_subtree", obj("type", []string{"string"}))
	s.candidates = mustAll(ac)

	return s
}

// pick returns the schema introduced at the highest minor not above the
// requested one, or nil when the request predates them all.
func pick(m map[int]*Schema, minor int) *Schema {
	best := -1
	for k := range m {
		if k <= minor && k > best {
			best = k
		}
	}
	if best < 0 {
		return nil
	}
	return m[best]
}

// In all accessors below, minor is the minor part of the request's
// microversion 1.<minor>.

// ProviderCreate is the POST /resource_providers body: name and uuid, plus
// parent_provider_uuid (a uuid or null) from 1.14.
func (s *Set) ProviderCreate(minor int) *Schema {
	if minor >= 14 {
		return s.providerCreate14
	}
	return s.providerCreate
}

// ProviderUpdate is the PUT /resource_providers/{uuid} body: name, plus
// parent_provider_uuid from 1.14.
func (s *Set) ProviderUpdate(minor int) *Schema {
	if minor >= 14 {
		return s.providerUpdate14
	}
	return s.providerUpdate
}

// ProviderListQuery is the GET /resource_providers query: name and uuid;
// member_of from 1.3, resources from 1.4, in_tree from 1.14, required from
// 1.18.
func (s *Set) ProviderListQuery(minor int) *Schema { return pick(s.providerList, minor) }

// InventoryCreate is the POST /resource_providers/{uuid}/inventories body
// (one inventory including its resource_class; generation optional).
func (s *Set) InventoryCreate() *Schema { return s.inventoryCreate }

// InventoryUpdate is the PUT /resource_providers/{uuid}/inventories/{rc}
// body (one inventory with resource_provider_generation required).
func (s *Set) InventoryUpdate() *Schema { return s.inventoryUpdate }

// InventoriesReplace is the PUT /resource_providers/{uuid}/inventories body
// (generation plus inventories keyed by resource class).
func (s *Set) InventoriesReplace() *Schema { return s.inventoriesReplace }

// ResourceClassCreate is the POST /resource_classes body (1.2+).
func (s *Set) ResourceClassCreate() *Schema { return s.resourceClassCreate }

// ResourceClassUpdate is the PUT /resource_classes/{name} schema. Up to 1.6
// it validates the request body; from 1.7 upstream validates the name from
// the URL by running this schema over the text {"name": "<name>"} (so a
// name that breaks that JSON is a "Malformed JSON" error there).
func (s *Set) ResourceClassUpdate() *Schema { return s.resourceClassUpdate }

// CustomTrait validates a bare trait name string, as PUT /traits/{name}
// (1.6+) does; upstream replaces the message with its own on failure.
func (s *Set) CustomTrait() *Schema { return s.customTrait }

// TraitsPut is upstream's PUT_TRAITS_SCHEMA ({"traits": [custom traits]}).
// No 8.0.0 handler uses it; it is provided for completeness.
func (s *Set) TraitsPut() *Schema { return s.traitsPut }

// ProviderTraitsSet is the PUT /resource_providers/{uuid}/traits body (1.6+).
func (s *Set) ProviderTraitsSet() *Schema { return s.providerTraitsSet }

// TraitListQuery is the GET /traits query (name, associated) (1.6+).
func (s *Set) TraitListQuery() *Schema { return s.traitListQuery }

// AggregatesPut is the PUT /resource_providers/{uuid}/aggregates body: a
// bare list of uuids before 1.19, then an object with aggregates and
// resource_provider_generation.
func (s *Set) AggregatesPut(minor int) *Schema {
	if minor >= 19 {
		return s.aggregates19
	}
	return s.aggregates
}

// AllocationsPut is the PUT /allocations/{consumer_uuid} body: a list of
// allocations (1.0), plus project_id/user_id (1.8), keyed by provider
// (1.12), with consumer_generation and possibly empty allocations (1.28),
// mappings (1.34), consumer_type (1.38).
func (s *Set) AllocationsPut(minor int) *Schema { return pick(s.allocationsPut, minor) }

// AllocationsPost is the POST /allocations body, keyed by consumer: 1.13,
// consumer_generation required (1.28), mappings (1.34), consumer_type
// (1.38). It is nil below 1.13, where the route does not exist.
func (s *Set) AllocationsPost(minor int) *Schema { return pick(s.allocationsPost, minor) }

// ReshaperPost is the POST /reshaper body: 1.30, with 1.34 and 1.38
// allocation forms. It is nil below 1.30.
func (s *Set) ReshaperPost(minor int) *Schema { return pick(s.reshaper, minor) }

// UsagesQuery is the GET /usages query: project_id, user_id (1.9), and
// consumer_type (1.38). It is nil below 1.9.
func (s *Set) UsagesQuery(minor int) *Schema { return pick(s.usages, minor) }

// AllocationCandidatesQuery is the GET /allocation_candidates query, with
// variants introduced at 1.10, 1.16, 1.17, 1.21, 1.25, 1.31, 1.33, 1.35 and
// 1.36. It is nil below 1.10.
func (s *Set) AllocationCandidatesQuery(minor int) *Schema { return pick(s.candidates, minor) }

// put is set with Go literals converted as obj does.
func (o *object) put(k string, v any) { o.set(k, lit(v)) }
