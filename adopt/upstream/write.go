package upstream

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Write creates Placement's schema at head h in an empty database and
// fills it with recs, so that h's release serves them unchanged. Ids
// are kept, which keeps Placement's orders; a root's root_provider_id is
// its own id, as Placement requires. Rows without a timestamp Placement
// would have set (aggregates and links, which we do not time) get now.
// On SQLite it is one transaction. MySQL commits each DDL statement at
// once (and a transaction open at the time with it), so there the schema
// is created first and the rows follow in one transaction of their own;
// the caller drops the tables of a failed Write (DropAll).
func Write(ctx context.Context, db *sql.DB, d Dialect, h Head, recs *store.Records, now time.Time) error {
	// One session: the sql_mode set here must hold for the inserts.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if d == MySQL {
		// VCPU's id is 0, which MySQL would otherwise take as "assign the
		// next one"; Placement sets the same mode for its class sync.
		if _, err := conn.ExecContext(ctx, `SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')`); err != nil {
			return fmt.Errorf("set sql_mode: %w", err)
		}
		if err := createSchema(ctx, conn, d, h); err != nil {
			return err
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if d == SQLite {
		if err := createSchema(ctx, tx, d, h); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO alembic_version (version_num) VALUES (?)`, h.Revision); err != nil {
		return fmt.Errorf("alembic_version: %w", err)
	}
	w := &writer{ctx: ctx, tx: tx, d: d, now: formatTime(d, now)}
	w.rows(recs)
	if w.err != nil {
		return w.err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// createSchema runs Placement's DDL at h.
func createSchema(ctx context.Context, x interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, d Dialect, h Head) error {
	for _, stmt := range ddl(d, h) {
		if _, err := x.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %s: %w", stmt, err)
		}
	}
	return nil
}

// DropAll drops Placement's tables, for undoing a failed MySQL Write.
func DropAll(ctx context.Context, db *sql.DB) error {
	var first error
	stmts := []string{"DROP TABLE IF EXISTS alembic_version"}
	ts := tables()
	for i := len(ts) - 1; i >= 0; i-- {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+ts[i])
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s, err)
		}
	}
	return first
}

// writer inserts rows until the first error, which it keeps.
type writer struct {
	ctx context.Context
	tx  *sql.Tx
	d   Dialect
	now any
	err error
}

// table inserts n rows into table through one prepared statement;
// args(i) gives the i-th row's values.
func (w *writer) table(table, columns, marks string, n int, args func(i int) []any) {
	if w.err != nil || n == 0 {
		return
	}
	stmt, err := w.tx.PrepareContext(w.ctx, "INSERT INTO "+table+" ("+columns+") VALUES ("+marks+")")
	if err != nil {
		w.err = fmt.Errorf("write %s: %w", table, err)
		return
	}
	defer stmt.Close()
	for i := 0; i < n; i++ {
		if _, err := stmt.ExecContext(w.ctx, args(i)...); err != nil {
			w.err = fmt.Errorf("write %s: row %d: %w", table, i+1, err)
			return
		}
	}
}

func (w *writer) t(t time.Time) any { return formatTime(w.d, t) }

// created is a row's created_at, now when we kept none.
func (w *writer) created(t time.Time) any {
	if t.IsZero() {
		return w.now
	}
	return w.t(t)
}

func (w *writer) rows(r *store.Records) {
	w.table("resource_classes", "id, name, created_at, updated_at", "?, ?, ?, ?", len(r.ResourceClasses), func(i int) []any {
		c := r.ResourceClasses[i]
		return []any{c.ID, c.Name, w.created(c.CreatedAt), w.t(c.UpdatedAt)}
	})
	w.table("traits", "id, name, created_at, updated_at", "?, ?, ?, ?", len(r.Traits), func(i int) []any {
		t := r.Traits[i]
		return []any{t.ID, t.Name, w.created(t.CreatedAt), w.t(t.UpdatedAt)}
	})
	w.providers(r.Providers)
	w.table("inventories", "resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at",
		"?, ?, ?, ?, ?, ?, ?, ?, ?, ?", len(r.Inventories), func(i int) []any {
			v := r.Inventories[i]
			return []any{v.ProviderID, v.ClassID, v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio, w.created(v.CreatedAt), w.t(v.UpdatedAt)}
		})
	w.table("resource_provider_traits", "resource_provider_id, trait_id, created_at", "?, ?, ?", len(r.ProviderTraits), func(i int) []any {
		return []any{r.ProviderTraits[i].ProviderID, r.ProviderTraits[i].TraitID, w.now}
	})
	w.table("placement_aggregates", "id, uuid, created_at", "?, ?, ?", len(r.Aggregates), func(i int) []any {
		return []any{r.Aggregates[i].ID, r.Aggregates[i].UUID, w.now}
	})
	w.table("resource_provider_aggregates", "resource_provider_id, aggregate_id, created_at", "?, ?, ?", len(r.ProviderAggregates), func(i int) []any {
		return []any{r.ProviderAggregates[i].ProviderID, r.ProviderAggregates[i].AggregateID, w.now}
	})
	w.table("projects", "id, external_id, created_at", "?, ?, ?", len(r.Projects), func(i int) []any {
		return []any{r.Projects[i].ID, r.Projects[i].ExternalID, w.now}
	})
	w.table("users", "id, external_id, created_at", "?, ?, ?", len(r.Users), func(i int) []any {
		return []any{r.Users[i].ID, r.Users[i].ExternalID, w.now}
	})
	w.table("consumer_types", "id, name, created_at", "?, ?, ?", len(r.ConsumerTypes), func(i int) []any {
		return []any{r.ConsumerTypes[i].ID, r.ConsumerTypes[i].Name, w.created(r.ConsumerTypes[i].CreatedAt)}
	})
	w.consumersAndAllocations(r)
}

// providers inserts every provider without its tree links, then sets
// them: a provider moved under a newer one (microversion 1.37) has a
// parent with a larger id.
func (w *writer) providers(ps []store.ProviderRow) {
	w.table("resource_providers", "id, uuid, name, generation, created_at, updated_at", "?, ?, ?, ?, ?, ?", len(ps), func(i int) []any {
		p := ps[i]
		return []any{p.ID, p.UUID, p.Name, p.Generation, w.created(p.CreatedAt), w.t(p.UpdatedAt)}
	})
	if w.err != nil {
		return
	}
	stmt, err := w.tx.PrepareContext(w.ctx, `UPDATE resource_providers SET root_provider_id = ?, parent_provider_id = ? WHERE id = ?`)
	if err != nil {
		w.err = fmt.Errorf("write resource_providers: %w", err)
		return
	}
	defer stmt.Close()
	for _, p := range ps {
		root := p.RootID
		if root == 0 {
			root = p.ID
		}
		var parent any
		if p.ParentID != 0 {
			parent = p.ParentID
		}
		if _, err := stmt.ExecContext(w.ctx, root, parent, p.ID); err != nil {
			w.err = fmt.Errorf("write resource_providers: tree of %s: %w", p.UUID, err)
			return
		}
	}
}

func (w *writer) consumersAndAllocations(r *store.Records) {
	uuids := make(map[int64]string, len(r.Consumers))
	w.table("consumers", "id, uuid, project_id, user_id, generation, consumer_type_id, created_at, updated_at", "?, ?, ?, ?, ?, ?, ?, ?", len(r.Consumers), func(i int) []any {
		c := r.Consumers[i]
		uuids[c.ID] = c.UUID
		var ctype any
		if c.ConsumerTypeID != 0 {
			ctype = c.ConsumerTypeID
		}
		return []any{c.ID, c.UUID, c.ProjectID, c.UserID, c.Generation, ctype, w.created(c.CreatedAt), w.t(c.UpdatedAt)}
	})
	w.table("allocations", "id, resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at", "?, ?, ?, ?, ?, ?, ?", len(r.Allocations), func(i int) []any {
		a := r.Allocations[i]
		return []any{a.ID, a.ProviderID, uuids[a.ConsumerID], a.ClassID, a.Used, w.created(a.CreatedAt), w.t(a.UpdatedAt)}
	})
}

// RequireEmpty fails unless the connection's MySQL database has no
// tables, so that an export never mixes with other data.
func RequireEmpty(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()`).Scan(&n); err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("the database has %d tables; export into an empty database", n)
	}
	return nil
}
