package mysql

import (
	"context"
	"fmt"
	"time"
)

// The leases (store.Leases) and shared records of replicas sharing the
// database; the tables are migration 0002's.

// AcquireLease inserts the lease or, when it has expired or is holder's
// already, takes it over, in one statement on the database's clock; then
// reads who holds it. MySQL applies the assignments left to right, so the
// expiry moves only when holder is the holder after the first one.
func (b *Backend) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	t, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", name, err)
	}
	defer t.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := t.ExecContext(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, `+dbMicros+` + ?)
		ON DUPLICATE KEY UPDATE
		holder = IF(expires_at < `+dbMicros+` OR holder = VALUES(holder), VALUES(holder), holder),
		expires_at = IF(holder = VALUES(holder), VALUES(expires_at), expires_at)`,
		name, holder, ttl.Microseconds()); err != nil {
		return false, fmt.Errorf("lease %s: %w", name, classify(err))
	}
	var got string
	if err := t.QueryRowContext(ctx, `SELECT holder FROM leases WHERE name = ?`, name).Scan(&got); err != nil {
		return false, fmt.Errorf("lease %s: %w", name, err)
	}
	if err := t.Commit(); err != nil {
		return false, fmt.Errorf("lease %s: %w", name, classify(err))
	}
	return got == holder, nil
}

// ReleaseLease expires the lease now if holder holds it.
func (b *Backend) ReleaseLease(ctx context.Context, name, holder string) error {
	if _, err := b.db.ExecContext(ctx, `UPDATE leases SET expires_at = 0 WHERE name = ? AND holder = ?`, name, holder); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// PutSharedRecord stores value under (kind, name) for every replica.
func (b *Backend) PutSharedRecord(ctx context.Context, kind, name string, value []byte) error {
	if _, err := b.db.ExecContext(ctx, `INSERT INTO shared_records (kind, name, value) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE value = VALUES(value)`, kind, name, value); err != nil {
		return fmt.Errorf("store shared record %s %s: %w", kind, name, err)
	}
	return nil
}

// SharedRecords returns the values stored under kind.
func (b *Backend) SharedRecords(ctx context.Context, kind string) ([][]byte, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT value FROM shared_records WHERE kind = ? ORDER BY name`, kind)
	if err != nil {
		return nil, fmt.Errorf("read shared records %s: %w", kind, err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read shared records %s: %w", kind, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
