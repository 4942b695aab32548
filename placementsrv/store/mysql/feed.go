package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// The change feed (store.Feed) and leases (store.Leases) of replicas
// sharing the database; the tables are migration 0002's.

// dbMicros is the database's clock in microseconds since the epoch.
const dbMicros = `CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)`

// AppendChange takes the next change id from feed_counter, whose row
// stays locked until this transaction ends, and records payload under it.
func (t *tx) AppendChange(ctx context.Context, payload []byte) (int64, error) {
	res, err := t.Exec(ctx, `UPDATE feed_counter SET value = LAST_INSERT_ID(value + 1) WHERE name = 'changes'`)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if id == 0 {
		return 0, fmt.Errorf("change feed counter missing")
	}
	if err := t.Run(ctx, `INSERT INTO changes (id, committed_at, payload) VALUES (?, `+dbMicros+`, ?)`, id, payload); err != nil {
		return 0, err
	}
	return id, nil
}

// LoadAt is Load and the counter read in the same snapshot: every change
// up to the counter is in the records, none after it.
func (b *Backend) LoadAt(ctx context.Context) (*store.Records, int64, error) {
	t, err := b.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", b.name, err)
	}
	defer t.Rollback() //nolint:errcheck // read-only
	var cursor int64
	if err := t.QueryRowContext(ctx, `SELECT value FROM feed_counter WHERE name = 'changes'`).Scan(&cursor); err != nil {
		return nil, 0, fmt.Errorf("load %s: change feed position: %w", b.name, err)
	}
	r, err := loadAll(ctx, t)
	if err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", b.name, err)
	}
	if err := t.Commit(); err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", b.name, err)
	}
	return r, cursor, nil
}

// Head reads the counter: the id of the last committed change.
func (b *Backend) Head(ctx context.Context) (int64, error) {
	var id int64
	if err := b.db.QueryRowContext(ctx, `SELECT value FROM feed_counter WHERE name = 'changes'`).Scan(&id); err != nil {
		return 0, fmt.Errorf("read the change feed's head of %s: %w", b.name, err)
	}
	return id, nil
}

// Changes reads committed changes after the id after.
func (b *Backend) Changes(ctx context.Context, after int64, limit int) ([]store.Change, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT id, committed_at, payload FROM changes WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read changes of %s: %w", b.name, err)
	}
	defer rows.Close()
	var out []store.Change
	for rows.Next() {
		var c store.Change
		var micros int64
		if err := rows.Scan(&c.ID, &micros, &c.Payload); err != nil {
			return nil, fmt.Errorf("read changes of %s: %w", b.name, err)
		}
		c.Time = time.UnixMicro(micros).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read changes of %s: %w", b.name, err)
	}
	return out, nil
}

// PruneChanges deletes changes committed before t but the last one, in
// batches so that no transaction grows large (Galera replicates each as
// one write set). The last stays so that a replica behind it finds a gap
// before it, rather than nothing, and reloads.
func (b *Backend) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		res, err := b.db.ExecContext(ctx, `DELETE FROM changes WHERE committed_at < ? AND id < (SELECT value FROM feed_counter WHERE name = 'changes') ORDER BY id LIMIT 5000`, before.UnixMicro())
		if err != nil {
			return total, fmt.Errorf("prune changes of %s: %w", b.name, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < 5000 {
			return total, nil
		}
	}
}

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

// Backend is shared by replicas.
var (
	_ store.Feed   = (*Backend)(nil)
	_ store.FeedTx = (*tx)(nil)
	_ store.Leases = (*Backend)(nil)
)
