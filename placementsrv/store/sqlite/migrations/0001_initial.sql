-- Initial schema. Times are Unix nanoseconds (UTC). Ids of standard
-- resource classes are their index in the standard list; custom classes
-- start at 10000.
CREATE TABLE resource_classes (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER
);

CREATE TABLE traits (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER
);

CREATE TABLE resource_providers (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT    NOT NULL UNIQUE,
    name               TEXT    NOT NULL UNIQUE,
    generation         INTEGER NOT NULL DEFAULT 0,
    root_provider_id   INTEGER REFERENCES resource_providers (id),
    parent_provider_id INTEGER REFERENCES resource_providers (id),
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER
);
CREATE INDEX resource_providers_root ON resource_providers (root_provider_id);
CREATE INDEX resource_providers_parent ON resource_providers (parent_provider_id);

CREATE TABLE inventories (
    resource_provider_id INTEGER NOT NULL REFERENCES resource_providers (id) ON DELETE CASCADE,
    resource_class_id    INTEGER NOT NULL REFERENCES resource_classes (id),
    total                INTEGER NOT NULL,
    reserved             INTEGER NOT NULL,
    min_unit             INTEGER NOT NULL,
    max_unit             INTEGER NOT NULL,
    step_size            INTEGER NOT NULL,
    allocation_ratio     REAL    NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER,
    PRIMARY KEY (resource_provider_id, resource_class_id)
);
CREATE INDEX inventories_class ON inventories (resource_class_id);

CREATE TABLE resource_provider_traits (
    resource_provider_id INTEGER NOT NULL REFERENCES resource_providers (id) ON DELETE CASCADE,
    trait_id             INTEGER NOT NULL REFERENCES traits (id),
    PRIMARY KEY (resource_provider_id, trait_id)
);
CREATE INDEX resource_provider_traits_trait ON resource_provider_traits (trait_id);

CREATE TABLE placement_aggregates (
    id   INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE
);

CREATE TABLE resource_provider_aggregates (
    resource_provider_id INTEGER NOT NULL REFERENCES resource_providers (id) ON DELETE CASCADE,
    aggregate_id         INTEGER NOT NULL REFERENCES placement_aggregates (id),
    PRIMARY KEY (resource_provider_id, aggregate_id)
);

CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE
);

CREATE TABLE users (
    id          INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE
);

CREATE TABLE consumer_types (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE consumers (
    id               INTEGER PRIMARY KEY,
    uuid             TEXT    NOT NULL UNIQUE,
    project_id       INTEGER NOT NULL REFERENCES projects (id),
    user_id          INTEGER NOT NULL REFERENCES users (id),
    consumer_type_id INTEGER REFERENCES consumer_types (id),
    generation       INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER
);

CREATE TABLE allocations (
    id                   INTEGER PRIMARY KEY,
    resource_provider_id INTEGER NOT NULL REFERENCES resource_providers (id),
    consumer_id          INTEGER NOT NULL REFERENCES consumers (id) ON DELETE CASCADE,
    resource_class_id    INTEGER NOT NULL REFERENCES resource_classes (id),
    used                 INTEGER NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER
);
CREATE INDEX allocations_consumer ON allocations (consumer_id);
CREATE INDEX allocations_provider ON allocations (resource_provider_id, resource_class_id);
