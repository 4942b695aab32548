package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// allocPlan is a validated replacement of several consumers' allocations,
// built against the state under the writer lock. It follows upstream's
// replace_all: every consumer that gets an entry has all its allocations
// deleted and the entries with a non-zero amount written; an emptied
// consumer contributes its current allocations with amount zero, which
// makes their providers count as touched.
type allocPlan struct {
	st        *state
	consumers []*consumerPlan
	entries   []allocEntry
	// removed is what the touched consumers hold now, per provider and
	// class; it is freed before the capacity check.
	removed map[provClass]int64
	// added is what the entries write, per provider and class.
	added map[provClass]int64
}

type provClass struct {
	p *provider
	c *resourceClass
}

type consumerPlan struct {
	req      store.ConsumerAllocations
	existing *consumer // nil for a consumer this plan creates
	touched  bool      // has entries: its allocations are replaced
	keeps    bool      // has an entry with a non-zero amount
}

type allocEntry struct {
	cons      *consumerPlan
	prov      *provider
	className string
	class     *resourceClass // set by check
	used      int64
}

// newAllocPlan checks consumer generations, then that every provider named
// exists, in request order (upstream's ensure_consumer, then
// create_allocation_list).
func newAllocPlan(st *state, reqs []store.ConsumerAllocations) (*allocPlan, error) {
	plan := &allocPlan{st: st, removed: map[provClass]int64{}, added: map[provClass]int64{}}
	seen := map[string]bool{}
	for _, req := range reqs {
		if seen[req.ConsumerUUID] {
			return nil, store.Errorf(store.ErrInvalid, "Consumer "+req.ConsumerUUID+" appears more than once.")
		}
		seen[req.ConsumerUUID] = true
		cp := &consumerPlan{req: req, existing: st.consumers[req.ConsumerUUID]}
		if err := cp.checkGeneration(); err != nil {
			return nil, err
		}
		plan.consumers = append(plan.consumers, cp)
	}
	for _, cp := range plan.consumers {
		if len(cp.req.Allocations) == 0 {
			if cp.existing == nil {
				continue
			}
			for _, a := range cp.existing.allocs {
				plan.entries = append(plan.entries, allocEntry{cons: cp, prov: a.provider, className: a.class.name, class: a.class})
			}
			continue
		}
		for _, a := range cp.req.Allocations {
			p, ok := st.providers[a.ProviderUUID]
			if !ok {
				return nil, store.Errorf(store.ErrInvalid, "Allocation for resource provider '"+a.ProviderUUID+"' that does not exist.")
			}
			plan.entries = append(plan.entries, allocEntry{cons: cp, prov: p, className: a.ResourceClass, used: a.Used})
		}
	}
	for _, e := range plan.entries {
		e.cons.touched = true
		if e.used > 0 {
			e.cons.keeps = true
		}
	}
	return plan, nil
}

// checkGeneration is upstream's consumer generation check (1.28).
func (cp *consumerPlan) checkGeneration() error {
	if !cp.req.CheckGeneration {
		return nil
	}
	got := "None"
	if cp.req.Generation != nil {
		got = fmt.Sprint(*cp.req.Generation)
	}
	if cp.existing != nil {
		if cp.req.Generation == nil || *cp.req.Generation != cp.existing.generation {
			return store.Errorf(store.ErrConsumerGeneration, fmt.Sprintf("consumer generation conflict - expected %d but got %s", cp.existing.generation, got))
		}
		return nil
	}
	if cp.req.Generation != nil {
		return store.Errorf(store.ErrConsumerGeneration, "consumer generation conflict - expected null but got "+got)
	}
	return nil
}

// check resolves resource classes and verifies inventory constraints and
// capacity as upstream's _check_capacity_exceeded, with invOf giving each
// provider's inventory (the reshaper passes its interim inventory).
func (plan *allocPlan) check(invOf func(*provider) map[*resourceClass]*inventory) error {
	classes := map[*resourceClass]bool{}
	for i := range plan.entries {
		e := &plan.entries[i]
		if e.class == nil {
			c, ok := plan.st.classes[e.className]
			if !ok {
				return store.Errorf(store.ErrNotFound, "No such resource class "+e.className+".")
			}
			e.class = c
		}
		classes[e.class] = true
	}
	for _, cp := range plan.consumers {
		if cp.touched && cp.existing != nil {
			for _, a := range cp.existing.allocs {
				plan.removed[provClass{a.provider, a.class}] += a.used
			}
		}
	}
	if err := plan.checkProvidersHaveInventory(classes, invOf); err != nil {
		return err
	}
	sums := map[provClass]int64{}
	for _, e := range plan.entries {
		key := provClass{e.prov, e.class}
		sums[key] += e.used
		if e.used == 0 {
			continue
		}
		plan.added[key] += e.used
		inv := invOf(e.prov)[e.class]
		if inv == nil {
			return store.Errorf(store.ErrCapacityExceeded, "Inventory for '"+e.className+"' on resource provider '"+e.prov.uuid+"' invalid.")
		}
		if e.used < inv.minUnit || e.used > inv.maxUnit || (inv.stepSize > 0 && e.used%inv.stepSize != 0) {
			return store.Errorf(store.ErrCapacityExceeded, "Unable to create allocation for '"+e.className+"' on resource provider '"+e.prov.uuid+"'. The requested amount would violate inventory constraints.")
		}
		used := e.prov.usage[e.class] - plan.removed[key]
		capacity := float64(inv.total-inv.reserved) * inv.allocationRatio
		if capacity < float64(used+e.used) || capacity < float64(used+sums[key]) {
			return store.Errorf(store.ErrCapacityExceeded, "Unable to create allocation for '"+e.className+"' on resource provider '"+e.prov.uuid+"'. The requested amount would exceed the capacity.")
		}
	}
	return nil
}

// checkProvidersHaveInventory fails when a provider named in the entries
// has no inventory of any class named in them.
func (plan *allocPlan) checkProvidersHaveInventory(classes map[*resourceClass]bool, invOf func(*provider) map[*resourceClass]*inventory) error {
	var missing []string
	seen := map[*provider]bool{}
	for _, e := range plan.entries {
		if seen[e.prov] {
			continue
		}
		seen[e.prov] = true
		has := false
		for c := range invOf(e.prov) {
			if classes[c] {
				has = true
				break
			}
		}
		if !has {
			missing = append(missing, e.prov.uuid)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := classNamesByID(classes)
	return store.Errorf(store.ErrCapacityExceeded, "Inventory for '"+strings.Join(names, ", ")+"' on resource provider '"+strings.Join(missing, ", ")+"' invalid.")
}

// usageAfter is the amount allocated of c on p once the plan is applied.
func (plan *allocPlan) usageAfter(p *provider, c *resourceClass) int64 {
	key := provClass{p, c}
	return p.usage[c] - plan.removed[key] + plan.added[key]
}

// exec writes the plan in tx: projects, users and consumer types as
// needed, new consumers (generation 0) and changed consumer attributes,
// then the allocations, the generation increments of touched providers
// and consumers, and the removal of consumers left without allocations.
// The returned apply mirrors it all in the state.
func (plan *allocPlan) exec(ctx context.Context, tx *sql.Tx, now time.Time, gens *generations) (func(), error) {
	st := plan.st
	ids := &externalIDs{st: st, projects: map[string]int64{}, users: map[string]int64{}, types: map[string]int64{}}
	type consumerChange struct {
		c                   *consumer
		isNew               bool
		project, user, kind string
		allocs              []*allocation
		generation          int64
		touched, deleted    bool
		changed             bool // a row update, for updated_at
	}
	changes := make([]*consumerChange, 0, len(plan.consumers))
	byPlan := map[*consumerPlan]*consumerChange{}
	for _, cp := range plan.consumers {
		ch, err := plan.writeConsumer(ctx, tx, now, ids, cp)
		if err != nil {
			return nil, err
		}
		cc := &consumerChange{c: ch.c, isNew: ch.isNew, project: ch.project, user: ch.user, kind: ch.kind,
			generation: ch.c.generation, touched: cp.touched, changed: ch.changed || cp.touched}
		changes = append(changes, cc)
		byPlan[cp] = cc
		if cp.touched && cp.existing != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM allocations WHERE consumer_id = ?`, cp.existing.id); err != nil {
				return nil, fmt.Errorf("delete allocations of consumer %s: %w", cp.req.ConsumerUUID, err)
			}
		}
	}
	var touchedProviders []*provider
	seenProv := map[*provider]bool{}
	for _, e := range plan.entries {
		if !seenProv[e.prov] {
			seenProv[e.prov] = true
			touchedProviders = append(touchedProviders, e.prov)
		}
		if e.used == 0 {
			continue
		}
		cc := byPlan[e.cons]
		res, err := tx.ExecContext(ctx, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (?, ?, ?, ?, ?)`,
			e.prov.id, cc.c.id, e.class.id, e.used, nanos(now))
		if err != nil {
			return nil, fmt.Errorf("insert allocation of consumer %s: %w", e.cons.req.ConsumerUUID, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, fmt.Errorf("insert allocation of consumer %s: %w", e.cons.req.ConsumerUUID, err)
		}
		cc.allocs = append(cc.allocs, &allocation{id: id, provider: e.prov, consumer: cc.c, class: e.class, used: e.used, createdAt: now})
	}
	for _, p := range touchedProviders {
		if err := gens.bump(ctx, tx, p, now); err != nil {
			return nil, err
		}
	}
	for _, cp := range plan.consumers {
		if !cp.touched {
			continue
		}
		cc := byPlan[cp]
		if !cp.keeps {
			if _, err := tx.ExecContext(ctx, `DELETE FROM consumers WHERE id = ?`, cc.c.id); err != nil {
				return nil, fmt.Errorf("delete consumer %s: %w", cp.req.ConsumerUUID, err)
			}
			cc.deleted = true
			continue
		}
		res, err := tx.ExecContext(ctx, `UPDATE consumers SET generation = generation + 1, updated_at = ? WHERE id = ? AND generation = ?`,
			nanos(now), cc.c.id, cc.generation)
		if err != nil {
			return nil, fmt.Errorf("increment generation of consumer %s: %w", cp.req.ConsumerUUID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return nil, store.Errorf(store.ErrConcurrentUpdate, "Another thread concurrently updated the data. Please retry your update")
		}
		cc.generation++
	}
	return func() {
		ids.apply()
		for _, cc := range changes {
			c := cc.c
			c.projectID, c.userID, c.consumerType = cc.project, cc.user, cc.kind
			if !cc.isNew && cc.changed {
				c.updatedAt = now
			}
			c.generation = cc.generation
			if cc.touched {
				detachAllocations(st, c)
				c.allocs = cc.allocs
				for _, a := range c.allocs {
					attachAllocation(st, a)
				}
			}
			switch {
			case cc.deleted:
				delete(st.consumers, c.uuid)
			case cc.isNew:
				st.consumers[c.uuid] = c
			}
		}
	}, nil
}

// writtenConsumer is a consumer as exec leaves it, before apply.
type writtenConsumer struct {
	c                   *consumer
	isNew, changed      bool
	project, user, kind string
}

// writeConsumer creates cp's consumer or updates its project, user and
// type when the request changes them (without a generation increment).
func (plan *allocPlan) writeConsumer(ctx context.Context, tx *sql.Tx, now time.Time, ids *externalIDs, cp *consumerPlan) (writtenConsumer, error) {
	req := cp.req
	projectID, err := ids.project(ctx, tx, req.ProjectID)
	if err != nil {
		return writtenConsumer{}, err
	}
	userID, err := ids.user(ctx, tx, req.UserID)
	if err != nil {
		return writtenConsumer{}, err
	}
	var typeID sql.NullInt64
	if req.ConsumerType != "" {
		id, err := ids.consumerType(ctx, tx, req.ConsumerType, now)
		if err != nil {
			return writtenConsumer{}, err
		}
		typeID = sql.NullInt64{Int64: id, Valid: true}
	}
	if c := cp.existing; c != nil {
		out := writtenConsumer{c: c, project: req.ProjectID, user: req.UserID, kind: c.consumerType}
		if req.ConsumerType != "" {
			out.kind = req.ConsumerType
		}
		if out.project == c.projectID && out.user == c.userID && out.kind == c.consumerType {
			return out, nil
		}
		if !typeID.Valid && c.consumerType != "" {
			typeID = sql.NullInt64{Int64: plan.st.consumerTypes[c.consumerType], Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = ? WHERE id = ? AND generation = ?`,
			projectID, userID, typeID, nanos(now), c.id, c.generation); err != nil {
			return writtenConsumer{}, fmt.Errorf("update consumer %s: %w", c.uuid, err)
		}
		out.changed = true
		return out, nil
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id, generation, created_at) VALUES (?, ?, ?, ?, 0, ?)`,
		req.ConsumerUUID, projectID, userID, typeID, nanos(now))
	if err != nil {
		return writtenConsumer{}, fmt.Errorf("insert consumer %s: %w", req.ConsumerUUID, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return writtenConsumer{}, fmt.Errorf("insert consumer %s: %w", req.ConsumerUUID, err)
	}
	c := &consumer{id: id, uuid: req.ConsumerUUID, createdAt: now}
	return writtenConsumer{c: c, isNew: true, project: req.ProjectID, user: req.UserID, kind: req.ConsumerType}, nil
}

// externalIDs finds or creates project, user and consumer type rows within
// one transaction, remembering what it created for apply.
type externalIDs struct {
	st                     *state
	projects, users, types map[string]int64
}

func (x *externalIDs) project(ctx context.Context, tx *sql.Tx, ext string) (int64, error) {
	return x.ensure(ctx, tx, x.st.projects, x.projects, `INSERT INTO projects (external_id) VALUES (?)`, ext)
}

func (x *externalIDs) user(ctx context.Context, tx *sql.Tx, ext string) (int64, error) {
	return x.ensure(ctx, tx, x.st.users, x.users, `INSERT INTO users (external_id) VALUES (?)`, ext)
}

func (x *externalIDs) consumerType(ctx context.Context, tx *sql.Tx, name string, now time.Time) (int64, error) {
	if id, ok := x.st.consumerTypes[name]; ok {
		return id, nil
	}
	if id, ok := x.types[name]; ok {
		return id, nil
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO consumer_types (name, created_at) VALUES (?, ?)`, name, nanos(now))
	if err != nil {
		return 0, fmt.Errorf("insert consumer type %s: %w", name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("insert consumer type %s: %w", name, err)
	}
	x.types[name] = id
	return id, nil
}

func (x *externalIDs) ensure(ctx context.Context, tx *sql.Tx, known, created map[string]int64, insert, ext string) (int64, error) {
	if id, ok := known[ext]; ok {
		return id, nil
	}
	if id, ok := created[ext]; ok {
		return id, nil
	}
	res, err := tx.ExecContext(ctx, insert, ext)
	if err != nil {
		return 0, fmt.Errorf("insert %s: %w", ext, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("insert %s: %w", ext, err)
	}
	created[ext] = id
	return id, nil
}

// apply records the created rows in the state.
func (x *externalIDs) apply() {
	for ext, id := range x.projects {
		x.st.projects[ext] = id
	}
	for ext, id := range x.users {
		x.st.users[ext] = id
	}
	for name, id := range x.types {
		x.st.consumerTypes[name] = id
		x.st.consumerTypeIDs[id] = name
	}
}
