package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
)

// seedStandard inserts any missing standard trait and resource class; it
// never deletes, as Placement's startup sync.
func (s *Store) seedStandard(ctx context.Context) error {
	now := nanos(s.now().UTC())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck
	for id, name := range standard.ResourceClasses() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, id, name, now); err != nil {
			return fmt.Errorf("resource class %s: %w", name, err)
		}
	}
	for _, name := range standard.Traits() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO traits (name, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, name, now); err != nil {
			return fmt.Errorf("trait %s: %w", name, err)
		}
	}
	return tx.Commit()
}

// load reads every table into a new state.
func load(ctx context.Context, db *sql.DB) (*state, error) {
	st := newState()
	stdClasses := map[string]bool{}
	for _, n := range standard.ResourceClasses() {
		stdClasses[n] = true
	}
	stdTraits := map[string]bool{}
	for _, n := range standard.Traits() {
		stdTraits[n] = true
	}
	classByID := map[int64]*resourceClass{}
	traitByID := map[int64]*trait{}
	provByID := map[int64]*provider{}
	aggByID := map[int64]*aggregate{}
	consByID := map[int64]*consumer{}
	projByID := map[int64]string{}
	userByID := map[int64]string{}

	steps := []struct {
		query string
		row   func(*sql.Rows) error
	}{
		{`SELECT id, name, created_at, updated_at FROM resource_classes`, func(r *sql.Rows) error {
			var c resourceClass
			var ca, ua sql.NullInt64
			if err := r.Scan(&c.id, &c.name, &ca, &ua); err != nil {
				return err
			}
			c.createdAt, c.updatedAt = fromNanos(ca), fromNanos(ua)
			c.standard = stdClasses[c.name]
			c.providers = map[*provider]struct{}{}
			st.classes[c.name] = &c
			classByID[c.id] = &c
			if c.id >= st.nextCustomClassID {
				st.nextCustomClassID = c.id + 1
			}
			return nil
		}},
		{`SELECT id, name, created_at, updated_at FROM traits`, func(r *sql.Rows) error {
			var t trait
			var ca, ua sql.NullInt64
			if err := r.Scan(&t.id, &t.name, &ca, &ua); err != nil {
				return err
			}
			t.createdAt, t.updatedAt = fromNanos(ca), fromNanos(ua)
			t.standard = stdTraits[t.name]
			t.providers = map[*provider]struct{}{}
			st.traits[t.name] = &t
			traitByID[t.id] = &t
			return nil
		}},
		{`SELECT id, uuid, name, generation, created_at, updated_at FROM resource_providers`, func(r *sql.Rows) error {
			var id, gen int64
			var uuid, name string
			var ca, ua sql.NullInt64
			if err := r.Scan(&id, &uuid, &name, &gen, &ca, &ua); err != nil {
				return err
			}
			p := newProvider(id, uuid, name)
			p.generation = gen
			p.createdAt, p.updatedAt = fromNanos(ca), fromNanos(ua)
			st.providers[uuid] = p
			st.providersByName[name] = p
			st.providerList = append(st.providerList, p)
			provByID[id] = p
			return nil
		}},
		{`SELECT id, root_provider_id, parent_provider_id FROM resource_providers`, func(r *sql.Rows) error {
			var id int64
			var root, parent sql.NullInt64
			if err := r.Scan(&id, &root, &parent); err != nil {
				return err
			}
			p := provByID[id]
			p.root = p
			if root.Valid && provByID[root.Int64] != nil {
				p.root = provByID[root.Int64]
			}
			if parent.Valid {
				pp := provByID[parent.Int64]
				if pp == nil {
					return fmt.Errorf("provider %s: parent %d missing", p.uuid, parent.Int64)
				}
				p.parent = pp
				pp.children[p] = struct{}{}
			}
			return nil
		}},
		{`SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at, updated_at FROM inventories`, func(r *sql.Rows) error {
			var pid, cid int64
			var inv inventory
			var ca, ua sql.NullInt64
			if err := r.Scan(&pid, &cid, &inv.total, &inv.reserved, &inv.minUnit, &inv.maxUnit, &inv.stepSize, &inv.allocationRatio, &ca, &ua); err != nil {
				return err
			}
			p, c := provByID[pid], classByID[cid]
			if p == nil || c == nil {
				return fmt.Errorf("inventory (%d, %d): dangling reference", pid, cid)
			}
			inv.class = c
			inv.createdAt, inv.updatedAt = fromNanos(ca), fromNanos(ua)
			p.inventories[c] = &inv
			c.providers[p] = struct{}{}
			return nil
		}},
		{`SELECT resource_provider_id, trait_id FROM resource_provider_traits`, func(r *sql.Rows) error {
			var pid, tid int64
			if err := r.Scan(&pid, &tid); err != nil {
				return err
			}
			p, t := provByID[pid], traitByID[tid]
			if p == nil || t == nil {
				return fmt.Errorf("provider trait (%d, %d): dangling reference", pid, tid)
			}
			p.traits[t] = struct{}{}
			t.providers[p] = struct{}{}
			return nil
		}},
		{`SELECT id, uuid FROM placement_aggregates`, func(r *sql.Rows) error {
			a := &aggregate{members: map[*provider]struct{}{}}
			if err := r.Scan(&a.id, &a.uuid); err != nil {
				return err
			}
			st.aggregates[a.uuid] = a
			aggByID[a.id] = a
			return nil
		}},
		{`SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates`, func(r *sql.Rows) error {
			var pid, aid int64
			if err := r.Scan(&pid, &aid); err != nil {
				return err
			}
			p, a := provByID[pid], aggByID[aid]
			if p == nil || a == nil {
				return fmt.Errorf("provider aggregate (%d, %d): dangling reference", pid, aid)
			}
			p.aggregates[a] = struct{}{}
			a.members[p] = struct{}{}
			return nil
		}},
		{`SELECT id, external_id FROM projects`, func(r *sql.Rows) error {
			var id int64
			var ext string
			if err := r.Scan(&id, &ext); err != nil {
				return err
			}
			st.projects[ext] = id
			projByID[id] = ext
			return nil
		}},
		{`SELECT id, external_id FROM users`, func(r *sql.Rows) error {
			var id int64
			var ext string
			if err := r.Scan(&id, &ext); err != nil {
				return err
			}
			st.users[ext] = id
			userByID[id] = ext
			return nil
		}},
		{`SELECT id, name FROM consumer_types`, func(r *sql.Rows) error {
			var id int64
			var name string
			if err := r.Scan(&id, &name); err != nil {
				return err
			}
			st.consumerTypes[name] = id
			st.consumerTypeIDs[id] = name
			return nil
		}},
		{`SELECT id, uuid, project_id, user_id, consumer_type_id, generation, created_at, updated_at FROM consumers`, func(r *sql.Rows) error {
			var c consumer
			var pid, uid int64
			var ctype, ca, ua sql.NullInt64
			if err := r.Scan(&c.id, &c.uuid, &pid, &uid, &ctype, &c.generation, &ca, &ua); err != nil {
				return err
			}
			c.projectID, c.userID = projByID[pid], userByID[uid]
			if ctype.Valid {
				c.consumerType = st.consumerTypeIDs[ctype.Int64]
			}
			c.createdAt, c.updatedAt = fromNanos(ca), fromNanos(ua)
			st.consumers[c.uuid] = &c
			consByID[c.id] = &c
			return nil
		}},
		{`SELECT id, resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at FROM allocations ORDER BY id`, func(r *sql.Rows) error {
			var a allocation
			var pid, cid, rcid int64
			var ca, ua sql.NullInt64
			if err := r.Scan(&a.id, &pid, &cid, &rcid, &a.used, &ca, &ua); err != nil {
				return err
			}
			a.provider, a.consumer, a.class = provByID[pid], consByID[cid], classByID[rcid]
			if a.provider == nil || a.consumer == nil || a.class == nil {
				return fmt.Errorf("allocation %d: dangling reference", a.id)
			}
			a.createdAt, a.updatedAt = fromNanos(ca), fromNanos(ua)
			a.consumer.allocs = append(a.consumer.allocs, &a)
			a.provider.allocs[&a] = struct{}{}
			a.provider.usage[a.class] += a.used
			return nil
		}},
	}
	for _, step := range steps {
		rows, err := db.QueryContext(ctx, step.query)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", step.query, err)
		}
		for rows.Next() {
			if err := step.row(rows); err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: %w", step.query, err)
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	st.sortProviderList()
	return st, nil
}
