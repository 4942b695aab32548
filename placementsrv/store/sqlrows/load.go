package sqlrows

// The queries that read each table whole at Load, rows with an id in id
// order, for the backends to run their own way (SQLite through the
// driver's values, MySQL in one read-only transaction).
const (
	LoadClasses            = `SELECT id, name, created_at, updated_at FROM resource_classes ORDER BY id`
	LoadTraits             = `SELECT id, name, created_at, updated_at FROM traits ORDER BY id`
	LoadProviders          = `SELECT id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at FROM resource_providers ORDER BY id`
	LoadInventories        = `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at FROM inventories`
	LoadProviderTraits     = `SELECT resource_provider_id, trait_id FROM resource_provider_traits`
	LoadAggregates         = `SELECT id, uuid FROM placement_aggregates ORDER BY id`
	LoadProviderAggregates = `SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates`
	LoadProjects           = `SELECT id, external_id FROM projects ORDER BY id`
	LoadUsers              = `SELECT id, external_id FROM users ORDER BY id`
	LoadConsumerTypes      = `SELECT id, name, created_at FROM consumer_types ORDER BY id`
	LoadConsumers          = `SELECT id, uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at FROM consumers ORDER BY id`
	// LoadAllocations reads the allocations with ids in (?, ?].
	LoadAllocations = `SELECT id, resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at FROM allocations WHERE id > ? AND id <= ? ORDER BY id`
)
