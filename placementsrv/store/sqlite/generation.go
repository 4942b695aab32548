package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// bumpGeneration increments p's generation in SQL as a compare-and-swap:
// only if it still equals expected (what the writer validated against).
// With one writer the swap cannot be lost unless memory and disk disagree;
// it keeps the statement correct for a store with several writers. The
// caller's apply updates memory.
func bumpGeneration(ctx context.Context, tx *sql.Tx, p *provider, expected int64, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE resource_providers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
		nanos(now), p.id, expected)
	if err != nil {
		return fmt.Errorf("increment generation of provider %s: %w", p.uuid, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("increment generation of provider %s: %w", p.uuid, err)
	}
	if n != 1 {
		return concurrentProviderUpdate()
	}
	return nil
}
