-- The change feed, the leases and the shared records (the reconciler's
-- heartbeats) of replicas sharing this database (feed.go). feed_counter holds the id of the last change: a write
-- transaction increments it as its last statement and holds its row lock
-- until it commits, so change ids are dense and in commit order (also
-- under Galera, where a concurrent increment on another node fails
-- certification and is retried). changes.committed_at and
-- leases.expires_at are microseconds since the epoch on the database's
-- clock.
CREATE TABLE IF NOT EXISTS feed_counter (
    name  VARCHAR(32) NOT NULL PRIMARY KEY,
    value BIGINT      NOT NULL
) {table};

INSERT IGNORE INTO feed_counter (name, value) VALUES ('changes', 0);

CREATE TABLE IF NOT EXISTS changes (
    id           BIGINT   NOT NULL PRIMARY KEY,
    committed_at BIGINT   NOT NULL,
    payload      LONGBLOB NOT NULL,
    KEY changes_committed_at (committed_at)
) {table};

CREATE TABLE IF NOT EXISTS leases (
    name       VARCHAR(64)  NOT NULL PRIMARY KEY,
    holder     VARCHAR(255) NOT NULL,
    expires_at BIGINT       NOT NULL
) {table};

CREATE TABLE IF NOT EXISTS shared_records (
    kind  VARCHAR(64)  NOT NULL,
    name  VARCHAR(255) NOT NULL,
    value MEDIUMBLOB   NOT NULL,
    PRIMARY KEY (kind, name)
) {table};
