package sqlrows

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ReadMetadata reads name from syncd_metadata, the same query on both
// backends; only the write's upsert differs between them.
func ReadMetadata(ctx context.Context, db rowQuerier, name string) (string, bool, error) {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM syncd_metadata WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read metadata %s: %w", name, err)
	}
	return v, true, nil
}
