package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Metadata reads name from syncd_metadata (migration 0002).
func (b *Backend) Metadata(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := b.db.QueryRowContext(ctx, `SELECT value FROM syncd_metadata WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read metadata %s: %w", name, err)
	}
	return v, true, nil
}

// SetMetadata stores name in syncd_metadata.
func (b *Backend) SetMetadata(ctx context.Context, name, value string) error {
	if _, err := b.db.ExecContext(ctx, `INSERT INTO syncd_metadata (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value); err != nil {
		return fmt.Errorf("store metadata %s: %w", name, err)
	}
	return nil
}
