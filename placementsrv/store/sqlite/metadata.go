package sqlite

import (
	"context"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

// Metadata reads name from syncd_metadata (migration 0002).
func (b *Backend) Metadata(ctx context.Context, name string) (string, bool, error) {
	return sqlrows.ReadMetadata(ctx, b.db, name)
}

// SetMetadata stores name in syncd_metadata.
func (b *Backend) SetMetadata(ctx context.Context, name, value string) error {
	if _, err := b.db.ExecContext(ctx, `INSERT INTO syncd_metadata (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value); err != nil {
		return fmt.Errorf("store metadata %s: %w", name, err)
	}
	return nil
}
