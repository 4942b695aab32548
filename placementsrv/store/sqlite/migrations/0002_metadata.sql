-- Facts about the database itself rather than Placement records, by
-- name (store.Metadata): the Placement release it was last served under.
CREATE TABLE syncd_metadata (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
