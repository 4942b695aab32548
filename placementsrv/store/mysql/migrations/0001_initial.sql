-- Initial schema. Times are Unix nanoseconds (UTC) in BIGINT, NULL for
-- none. Ids of standard resource classes are their index in the standard
-- list; custom classes start at 10000; the ledger chooses both. Every
-- table has a primary key (Galera replicates by it). The placeholder
-- after each table is replaced by its options when the migration runs:
-- InnoDB, utf8mb4 with an exact (binary, no-pad) collation. DDL commits
-- as it goes in MySQL, so every statement can run again after a failed
-- attempt (IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS resource_classes (
    id         BIGINT       NOT NULL PRIMARY KEY,
    name       VARCHAR(255) NOT NULL,
    created_at BIGINT       NOT NULL,
    updated_at BIGINT,
    UNIQUE KEY uniq_resource_classes0name (name)
) {table};

CREATE TABLE IF NOT EXISTS traits (
    id         BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name       VARCHAR(255) NOT NULL,
    created_at BIGINT       NOT NULL,
    updated_at BIGINT,
    UNIQUE KEY uniq_traits0name (name)
) {table};

CREATE TABLE IF NOT EXISTS resource_providers (
    id                 BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid               VARCHAR(255) NOT NULL,
    name               VARCHAR(255) NOT NULL,
    generation         BIGINT       NOT NULL DEFAULT 0,
    root_provider_id   BIGINT,
    parent_provider_id BIGINT,
    created_at         BIGINT       NOT NULL,
    updated_at         BIGINT,
    UNIQUE KEY uniq_resource_providers0uuid (uuid),
    UNIQUE KEY uniq_resource_providers0name (name),
    KEY resource_providers_root (root_provider_id),
    KEY resource_providers_parent (parent_provider_id),
    CONSTRAINT resource_providers_root_fk FOREIGN KEY (root_provider_id) REFERENCES resource_providers (id),
    CONSTRAINT resource_providers_parent_fk FOREIGN KEY (parent_provider_id) REFERENCES resource_providers (id)
) {table};

CREATE TABLE IF NOT EXISTS inventories (
    resource_provider_id BIGINT NOT NULL,
    resource_class_id    BIGINT NOT NULL,
    total                BIGINT NOT NULL,
    reserved             BIGINT NOT NULL,
    min_unit             BIGINT NOT NULL,
    max_unit             BIGINT NOT NULL,
    step_size            BIGINT NOT NULL,
    allocation_ratio     DOUBLE NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT,
    PRIMARY KEY (resource_provider_id, resource_class_id),
    KEY inventories_class (resource_class_id),
    CONSTRAINT inventories_provider_fk FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id) ON DELETE CASCADE,
    CONSTRAINT inventories_class_fk FOREIGN KEY (resource_class_id) REFERENCES resource_classes (id)
) {table};

CREATE TABLE IF NOT EXISTS resource_provider_traits (
    resource_provider_id BIGINT NOT NULL,
    trait_id             BIGINT NOT NULL,
    PRIMARY KEY (resource_provider_id, trait_id),
    KEY resource_provider_traits_trait (trait_id),
    CONSTRAINT resource_provider_traits_provider_fk FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id) ON DELETE CASCADE,
    CONSTRAINT resource_provider_traits_trait_fk FOREIGN KEY (trait_id) REFERENCES traits (id)
) {table};

CREATE TABLE IF NOT EXISTS placement_aggregates (
    id   BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(255) NOT NULL,
    UNIQUE KEY uniq_placement_aggregates0uuid (uuid)
) {table};

CREATE TABLE IF NOT EXISTS resource_provider_aggregates (
    resource_provider_id BIGINT NOT NULL,
    aggregate_id         BIGINT NOT NULL,
    PRIMARY KEY (resource_provider_id, aggregate_id),
    KEY resource_provider_aggregates_aggregate (aggregate_id),
    CONSTRAINT resource_provider_aggregates_provider_fk FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id) ON DELETE CASCADE,
    CONSTRAINT resource_provider_aggregates_aggregate_fk FOREIGN KEY (aggregate_id) REFERENCES placement_aggregates (id)
) {table};

CREATE TABLE IF NOT EXISTS projects (
    id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    external_id VARCHAR(255) NOT NULL,
    UNIQUE KEY uniq_projects0external_id (external_id)
) {table};

CREATE TABLE IF NOT EXISTS users (
    id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    external_id VARCHAR(255) NOT NULL,
    UNIQUE KEY uniq_users0external_id (external_id)
) {table};

CREATE TABLE IF NOT EXISTS consumer_types (
    id         BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name       VARCHAR(255) NOT NULL,
    created_at BIGINT       NOT NULL,
    UNIQUE KEY uniq_consumer_types0name (name)
) {table};

CREATE TABLE IF NOT EXISTS consumers (
    id               BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid             VARCHAR(255) NOT NULL,
    project_id       BIGINT       NOT NULL,
    user_id          BIGINT       NOT NULL,
    consumer_type_id BIGINT,
    generation       BIGINT       NOT NULL DEFAULT 0,
    created_at       BIGINT       NOT NULL,
    updated_at       BIGINT,
    UNIQUE KEY uniq_consumers0uuid (uuid),
    CONSTRAINT consumers_project_fk FOREIGN KEY (project_id) REFERENCES projects (id),
    CONSTRAINT consumers_user_fk FOREIGN KEY (user_id) REFERENCES users (id),
    CONSTRAINT consumers_type_fk FOREIGN KEY (consumer_type_id) REFERENCES consumer_types (id)
) {table};

CREATE TABLE IF NOT EXISTS allocations (
    id                   BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    resource_provider_id BIGINT NOT NULL,
    consumer_id          BIGINT NOT NULL,
    resource_class_id    BIGINT NOT NULL,
    used                 BIGINT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT,
    KEY allocations_consumer (consumer_id),
    KEY allocations_provider (resource_provider_id, resource_class_id),
    CONSTRAINT allocations_provider_fk FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id),
    CONSTRAINT allocations_consumer_fk FOREIGN KEY (consumer_id) REFERENCES consumers (id) ON DELETE CASCADE,
    CONSTRAINT allocations_class_fk FOREIGN KEY (resource_class_id) REFERENCES resource_classes (id)
) {table};
