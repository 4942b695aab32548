-- Facts about the database itself rather than Placement records, by
-- name (store.Metadata): the Placement release it was last served under.
CREATE TABLE IF NOT EXISTS syncd_metadata (
    name  VARCHAR(64)  NOT NULL PRIMARY KEY,
    value VARCHAR(255) NOT NULL
) {table};
