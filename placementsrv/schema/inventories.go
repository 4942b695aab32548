package schema

import "github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"

// Inventory schemas (placement/schemas/inventory.py).

func (s *Set) addInventories() {
	s.inventoryCreate = mustCompile(inventoryCreateBody())
	s.inventoryUpdate = mustCompile(inventoryBody())
	s.inventoriesReplace = mustCompile(inventoriesReplaceBody())
}

// inventoryBody is one inventory with resource_provider_generation
// required, the PUT /resource_providers/{uuid}/inventories/{rc} body and
// the base of the others.
func inventoryBody() *object {
	return obj(
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
}

func inventoryCreateBody() *object {
	post := inventoryBody()
	post.At("properties").Put("resource_class", obj("type", "string", "pattern", rcPattern))
	post.AppendRequired("resource_class")
	post.RemoveRequired("resource_provider_generation")
	return post
}

// inventoriesReplaceBody is the PUT /resource_providers/{uuid}/inventories
// body, which the reshaper also takes per provider.
func inventoriesReplaceBody() *object {
	record := inventoryBody()
	record.RemoveRequired("resource_provider_generation")
	return obj(
		"type", "object",
		"properties", obj(
			"resource_provider_generation", obj("type", "integer"),
			"inventories", obj(
				"type", "object",
				"patternProperties", obj(rcPattern, record),
			),
		),
		"required", []string{"resource_provider_generation", "inventories"},
		"additionalProperties", false,
	)
}

// InventoryCreate is the POST /resource_providers/{uuid}/inventories body
// (one inventory including its resource_class; generation optional).
func (s *Set) InventoryCreate() *jsonschema.Schema { return s.inventoryCreate }

// InventoryUpdate is the PUT /resource_providers/{uuid}/inventories/{rc}
// body (one inventory with resource_provider_generation required).
func (s *Set) InventoryUpdate() *jsonschema.Schema { return s.inventoryUpdate }

// InventoriesReplace is the PUT /resource_providers/{uuid}/inventories body
// (generation plus inventories keyed by resource class).
func (s *Set) InventoriesReplace() *jsonschema.Schema { return s.inventoriesReplace }
