package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// The change feed (store.Feed) of replicas sharing the database: changes
// keyed by an auto-increment id, and feed_counter's two marks, 'settled'
// and 'pruned' (migrations 0002 and 0003; the ledger's DESIGN.md, "The
// feed").

// dbMicros is the database's clock in microseconds since the epoch.
const dbMicros = `CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)`

// settleLockWait is how long, in seconds, a tombstone waits for a writer
// that has inserted its change but not committed yet.
const settleLockWait = 1

// maxInList bounds the ids of one IN list.
const maxInList = 500

// AppendChange records payload as a change under the next auto-increment
// id. The id is taken when the row is inserted and no lock is held past
// that row's own, so concurrent writers do not wait for each other. A
// tombstone that took the id first (a reader settling it as a hole)
// makes the insert a duplicate: the write is run again (store.ErrRetry).
func (t *tx) AppendChange(ctx context.Context, payload []byte) (int64, error) {
	res, err := t.Exec(ctx, appendChange, payload)
	if err != nil {
		return 0, duplicateIsRetry(err)
	}
	return res.LastInsertId()
}

// appendChange inserts a change under the next auto-increment id.
const appendChange = `INSERT INTO changes (committed_at, payload) VALUES (` + dbMicros + `, ?)`

// CommitChange sends the change's insert and COMMIT as one statement
// batch (session.go): a round trip saved on every write. The server runs
// COMMIT only if the insert succeeded; a failed batch leaves the
// connection discarded and the transaction rolled back.
func (t *tx) CommitChange(ctx context.Context, payload []byte) (int64, error) {
	id, err := t.s.commitWith(ctx, appendChange, payload)
	if err != nil {
		return 0, duplicateIsRetry(classify(err))
	}
	return id, nil
}

// duplicateIsRetry: a tombstone that took the id first makes the insert
// a duplicate, and the write is run again.
func duplicateIsRetry(err error) error {
	var me *mysql.MySQLError
	if errors.Is(err, store.ErrDuplicate) && errors.As(err, &me) {
		return kindError{me, store.ErrRetry}
	}
	return err
}

// LoadAt is Load, the settled mark and the ids of the changes above it
// read in the same snapshot.
func (b *Backend) LoadAt(ctx context.Context) (*store.Records, store.FeedPosition, error) {
	var pos store.FeedPosition
	t, err := b.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, pos, fmt.Errorf("load %s: %w", b.name, err)
	}
	defer t.Rollback() //nolint:errcheck // read-only
	if err := t.QueryRowContext(ctx, `SELECT value FROM feed_counter WHERE name = 'settled'`).Scan(&pos.Settled); err != nil {
		return nil, pos, fmt.Errorf("load %s: the change feed's settled mark: %w", b.name, err)
	}
	r, err := loadAll(ctx, t)
	if err != nil {
		return nil, pos, fmt.Errorf("load %s: %w", b.name, err)
	}
	if pos.Seen, err = changeIDs(ctx, t, pos.Settled); err != nil {
		return nil, pos, fmt.Errorf("load %s: %w", b.name, err)
	}
	if err := t.Commit(); err != nil {
		return nil, pos, fmt.Errorf("load %s: %w", b.name, err)
	}
	return r, pos, nil
}

// changeIDs reads the ids of the changes above after.
func changeIDs(ctx context.Context, t *sql.Tx, after int64) ([]int64, error) {
	rows, err := t.QueryContext(ctx, `SELECT id FROM changes WHERE id > ? ORDER BY id`, after)
	if err != nil {
		return nil, fmt.Errorf("read change ids: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read change ids: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Changes reads, in one statement and so from one snapshot, the committed
// changes among missing and after after, and the pruned mark (as id 0,
// which no change has): pruning raises the mark before it deletes, so a
// change this read misses because it was pruned shows in the mark.
func (b *Backend) Changes(ctx context.Context, after int64, missing []int64, limit int) ([]store.Change, int64, error) {
	q := `(SELECT 0, value, '' FROM feed_counter WHERE name = 'pruned')`
	var args []any
	for len(missing) > 0 {
		n := min(len(missing), maxInList)
		in, inArgs := inList(` UNION ALL (SELECT id, committed_at, payload FROM changes WHERE id IN `, missing[:n])
		q, args, missing = q+in+`)`, append(args, inArgs...), missing[n:]
	}
	q += ` UNION ALL (SELECT id, committed_at, payload FROM changes WHERE id > ? ORDER BY id LIMIT ?)`
	chs, err := b.readChanges(ctx, q, append(args, after, limit)...)
	if err != nil {
		return nil, 0, err
	}
	pruned := int64(-1)
	out := chs[:0]
	for _, c := range chs {
		if c.ID == 0 {
			pruned = c.Time.UnixMicro()
			continue
		}
		out = append(out, c)
	}
	if pruned < 0 {
		return nil, 0, fmt.Errorf("read changes of %s: the change feed's pruned mark is missing", b.name)
	}
	slices.SortFunc(out, func(x, y store.Change) int { return cmp.Compare(x.ID, y.ID) })
	return out, pruned, nil
}

func (b *Backend) readChanges(ctx context.Context, q string, args ...any) ([]store.Change, error) {
	rows, err := b.db.QueryContext(ctx, q, args...)
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

// inList appends "(?, ?, ...)" for ids to prefix.
func inList(prefix string, ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return prefix + "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")", args
}

// Settle inserts a tombstone for each missing id on a connection of its
// own whose lock wait is short: an id whose writer inserted its change
// but has not committed keeps the insert waiting, and after the wait it
// stays open. A duplicate (IGNORE: no row inserted) means a change or a
// tombstone holds the id already; the reader finds it there.
func (b *Backend) Settle(ctx context.Context, through int64, missing []int64) ([]int64, error) {
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("settle the change feed of %s: %w", b.name, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`SET SESSION innodb_lock_wait_timeout = %d`, settleLockWait)); err != nil {
		return nil, fmt.Errorf("settle the change feed of %s: %w", b.name, err)
	}
	// The connection goes back to the pool: give it the default again.
	defer conn.ExecContext(context.Background(), `SET SESSION innodb_lock_wait_timeout = DEFAULT`) //nolint:errcheck // a failed reset leaves a shorter wait only
	var closed []int64
	for _, id := range missing {
		res, err := conn.ExecContext(ctx, `INSERT IGNORE INTO changes (id, committed_at, payload) VALUES (?, `+dbMicros+`, '')`, id)
		if isLockWait(err) {
			continue
		}
		if err != nil {
			return closed, fmt.Errorf("settle change %d of %s: %w", id, b.name, classify(err))
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			closed = append(closed, id)
		}
	}
	if _, err := conn.ExecContext(ctx, `UPDATE feed_counter SET value = ? WHERE name = 'settled' AND value < ?`, through, through); err != nil && !errors.Is(classify(err), store.ErrRetry) {
		return closed, fmt.Errorf("raise the settled mark of %s: %w", b.name, err)
	}
	return closed, nil
}

// isLockWait reports a lock wait timeout, or a Galera certification
// conflict with the writer of the id.
func isLockWait(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == errLockWaitTimeout || me.Number == errLockDeadlock)
}

// PruneChanges deletes changes committed before t up to the settled
// mark, in batches so that no transaction grows large (Galera replicates
// each as one write set). It raises the pruned mark to the last id it
// will delete before deleting, so that a reader behind it reloads.
func (b *Backend) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	var last sql.NullInt64
	if err := b.db.QueryRowContext(ctx, `SELECT MAX(id) FROM changes WHERE committed_at < ? AND id <= (SELECT value FROM feed_counter WHERE name = 'settled')`, before.UnixMicro()).Scan(&last); err != nil {
		return 0, fmt.Errorf("prune changes of %s: %w", b.name, err)
	}
	if !last.Valid {
		return 0, nil
	}
	if _, err := b.db.ExecContext(ctx, `UPDATE feed_counter SET value = ? WHERE name = 'pruned' AND value < ?`, last.Int64, last.Int64); err != nil {
		return 0, fmt.Errorf("prune changes of %s: raise the pruned mark: %w", b.name, err)
	}
	var total int64
	for {
		res, err := b.db.ExecContext(ctx, `DELETE FROM changes WHERE id <= ? ORDER BY id LIMIT 5000`, last.Int64)
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

// Backend is shared by replicas.
var (
	_ store.Feed   = (*Backend)(nil)
	_ store.FeedTx = (*tx)(nil)
	_ store.Leases = (*Backend)(nil)
)
