package upstream

// The schema at each head, written for each dialect from Placement's
// models and migrations: the same tables, columns, keys, constraint and
// index names, so that Placement's own migrations find nothing to do and
// its queries the indexes they expect.

// timestamps are the two columns every Placement table starts with.
const timestamps = "created_at DATETIME, updated_at DATETIME, "

// index is a CREATE INDEX statement's parts.
type index struct{ name, table, columns string }

// ddl returns the statements creating h's schema, alembic_version last.
// Each table's indexes follow it, in the order Placement creates them.
func ddl(d Dialect, h Head) []string {
	// No charset: Placement's migrations name none, so its tables take
	// the database's default, and so must ours.
	engine := ""
	if d == MySQL {
		engine = " ENGINE=InnoDB"
	}
	var stmts []string
	for _, t := range tableDDL(d) {
		stmts = append(stmts, t.create+engine)
		for _, ix := range t.indexes {
			if !h.droppedIndex(ix.name) {
				stmts = append(stmts, "CREATE INDEX "+ix.name+" ON "+ix.table+" ("+ix.columns+")")
			}
		}
	}
	return append(stmts, "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"+engine)
}

// tableSQL is a table's CREATE TABLE and its indexes at 8.0.0's head.
type tableSQL struct {
	create  string
	indexes []index
}

func tableDDL(d Dialect) []tableSQL {
	id := "id INTEGER NOT NULL" + autoinc(d) + ", "
	return []tableSQL{
		{create: "CREATE TABLE resource_classes (" + timestamps + id + "name VARCHAR(255) NOT NULL, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_resource_classes0name UNIQUE (name))"},
		{create: "CREATE TABLE traits (" + timestamps + id + "name VARCHAR(255) NOT NULL, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_traits0name UNIQUE (name))"},
		{create: "CREATE TABLE resource_providers (" + timestamps + id + "uuid VARCHAR(36) NOT NULL, " +
			"name VARCHAR(200), generation INTEGER, root_provider_id INTEGER, parent_provider_id INTEGER, PRIMARY KEY (id), " +
			"FOREIGN KEY (parent_provider_id) REFERENCES resource_providers (id), " +
			"FOREIGN KEY (root_provider_id) REFERENCES resource_providers (id), " +
			"CONSTRAINT uniq_resource_providers0name UNIQUE (name), CONSTRAINT uniq_resource_providers0uuid UNIQUE (uuid))",
			indexes: []index{
				{"resource_providers_name_idx", "resource_providers", "name"},
				{"resource_providers_parent_provider_id_idx", "resource_providers", "parent_provider_id"},
				{"resource_providers_root_provider_id_idx", "resource_providers", "root_provider_id"},
				{"resource_providers_uuid_idx", "resource_providers", "uuid"},
			}},
		{create: "CREATE TABLE inventories (" + timestamps + id + "resource_provider_id INTEGER NOT NULL, " +
			"resource_class_id INTEGER NOT NULL, total INTEGER NOT NULL, reserved INTEGER NOT NULL, min_unit INTEGER NOT NULL, " +
			"max_unit INTEGER NOT NULL, step_size INTEGER NOT NULL, allocation_ratio FLOAT NOT NULL, PRIMARY KEY (id), " +
			"CONSTRAINT uniq_inventories0resource_provider_resource_class UNIQUE (resource_provider_id, resource_class_id))",
			indexes: []index{
				{"inventories_resource_class_id_idx", "inventories", "resource_class_id"},
				{"inventories_resource_provider_id_idx", "inventories", "resource_provider_id"},
				{"inventories_resource_provider_resource_class_idx", "inventories", "resource_provider_id, resource_class_id"},
			}},
		{create: "CREATE TABLE resource_provider_traits (" + timestamps + "trait_id INTEGER NOT NULL, resource_provider_id INTEGER NOT NULL, " +
			"PRIMARY KEY (trait_id, resource_provider_id), " +
			"FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id), FOREIGN KEY (trait_id) REFERENCES traits (id))",
			indexes: []index{{"resource_provider_traits_resource_provider_trait_idx", "resource_provider_traits", "resource_provider_id, trait_id"}}},
		{create: "CREATE TABLE placement_aggregates (" + timestamps + id + "uuid VARCHAR(36), " +
			"PRIMARY KEY (id), CONSTRAINT uniq_placement_aggregates0uuid UNIQUE (uuid))",
			indexes: []index{{"ix_placement_aggregates_uuid", "placement_aggregates", "uuid"}}},
		{create: "CREATE TABLE resource_provider_aggregates (" + timestamps + "resource_provider_id INTEGER NOT NULL, aggregate_id INTEGER NOT NULL, " +
			"PRIMARY KEY (resource_provider_id, aggregate_id))",
			indexes: []index{{"resource_provider_aggregates_aggregate_id_idx", "resource_provider_aggregates", "aggregate_id"}}},
		{create: "CREATE TABLE projects (" + timestamps + id + "external_id VARCHAR(255) NOT NULL, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_projects0external_id UNIQUE (external_id))"},
		{create: "CREATE TABLE users (" + timestamps + id + "external_id VARCHAR(255) NOT NULL, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_users0external_id UNIQUE (external_id))"},
		{create: "CREATE TABLE consumer_types (" + timestamps + id + "name VARCHAR(255) NOT NULL, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_consumer_types0name UNIQUE (name))"},
		{create: "CREATE TABLE consumers (" + timestamps + id + "uuid VARCHAR(36) NOT NULL, " +
			"project_id INTEGER NOT NULL, user_id INTEGER NOT NULL, generation INTEGER DEFAULT 0 NOT NULL, consumer_type_id INTEGER, " +
			"PRIMARY KEY (id), CONSTRAINT uniq_consumers0uuid UNIQUE (uuid), " +
			"CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY (consumer_type_id) REFERENCES consumer_types (id))",
			indexes: []index{
				{"consumers_project_id_user_id_uuid_idx", "consumers", "project_id, user_id, uuid"},
				{"consumers_project_id_uuid_idx", "consumers", "project_id, uuid"},
				{"consumers_consumer_type_id_idx", "consumers", "consumer_type_id"},
			}},
		{create: "CREATE TABLE allocations (" + timestamps + id + "resource_provider_id INTEGER NOT NULL, " +
			"consumer_id VARCHAR(36) NOT NULL, resource_class_id INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (id))",
			indexes: []index{
				{"allocations_resource_provider_class_used_idx", "allocations", "resource_provider_id, resource_class_id, used"},
				{"allocations_resource_class_id_idx", "allocations", "resource_class_id"},
				{"allocations_consumer_id_idx", "allocations", "consumer_id"},
			}},
	}
}

// autoinc marks a MySQL id column as assigned by the server, as
// SQLAlchemy creates an integer primary key there; SQLite's INTEGER
// PRIMARY KEY is that already.
func autoinc(d Dialect) string {
	if d == MySQL {
		return " AUTO_INCREMENT"
	}
	return ""
}
