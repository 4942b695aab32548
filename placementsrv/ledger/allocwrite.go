package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// planWrite is one execution of an allocPlan. It lives on exec's stack:
// the apply that exec returns captures only what it needs.
type planWrite struct {
	plan    *allocPlan
	tx      store.Tx
	now     time.Time
	ids     *externalIDs
	changes []*consumerChange
}

// consumerChange is the new state of one consumer of the plan.
type consumerChange struct {
	c                   *consumer
	isNew               bool
	project, user, kind string
	allocs              []*allocation
	generation          int64
	touched, deleted    bool
	changed             bool // a row update, for updated_at
}

// exec writes the plan in tx: projects, users and consumer types as
// needed, new consumers (generation 0) and changed consumer attributes,
// then the allocations, the generation increments of touched providers
// and consumers, and the removal of consumers left without allocations.
// The returned apply mirrors it all in the state.
func (plan *allocPlan) exec(ctx context.Context, tx store.Tx, now time.Time, gens *generations) (func(), error) {
	w := planWrite{
		plan: plan, tx: tx, now: now,
		ids:     &externalIDs{st: plan.st, projects: map[string]int64{}, users: map[string]int64{}, types: map[string]int64{}},
		changes: make([]*consumerChange, 0, len(plan.consumers)),
	}
	if err := w.consumers(ctx); err != nil {
		return nil, err
	}
	if err := w.allocations(ctx, gens); err != nil {
		return nil, err
	}
	if err := w.consumerGenerations(ctx); err != nil {
		return nil, err
	}
	st, ids, changes := plan.st, w.ids, w.changes
	return func() { applyChanges(st, ids, changes, now) }, nil
}

// consumers writes each consumer and deletes the allocations of those
// whose allocations are replaced.
func (w *planWrite) consumers(ctx context.Context) error {
	for _, cp := range w.plan.consumers {
		ch, err := w.writeConsumer(ctx, cp)
		if err != nil {
			return err
		}
		cp.change = &consumerChange{c: ch.c, isNew: ch.isNew, project: ch.project, user: ch.user, kind: ch.kind,
			generation: ch.c.generation, touched: cp.touched, changed: ch.changed || cp.touched}
		w.changes = append(w.changes, cp.change)
		if cp.touched && cp.existing != nil {
			if err := w.tx.DeleteConsumerAllocations(ctx, cp.existing.id); err != nil {
				return fmt.Errorf("delete allocations of consumer %s: %w", cp.req.ConsumerUUID, err)
			}
		}
	}
	return nil
}

// allocations inserts the entries with a non-zero amount, then increments
// the generation of every provider the entries name, in order of first
// mention.
func (w *planWrite) allocations(ctx context.Context, gens *generations) error {
	var touched []*provider
	seen := map[*provider]bool{}
	for _, e := range w.plan.entries {
		if !seen[e.prov] {
			seen[e.prov] = true
			touched = append(touched, e.prov)
		}
		if e.used == 0 {
			continue
		}
		cc := e.cons.change
		id, err := w.tx.InsertAllocation(ctx, store.AllocationRow{
			ProviderID: e.prov.id, ConsumerID: cc.c.id, ClassID: e.class.id, Used: e.used, CreatedAt: w.now,
		})
		if err != nil {
			return fmt.Errorf("insert allocation of consumer %s: %w", e.cons.req.ConsumerUUID, err)
		}
		cc.allocs = append(cc.allocs, &allocation{id: id, provider: e.prov, consumer: cc.c, class: e.class, used: e.used, createdAt: stampOf(w.now)})
	}
	for _, p := range touched {
		if err := gens.bump(ctx, w.tx, p, w.now); err != nil {
			return err
		}
	}
	return nil
}

// consumerGenerations deletes the touched consumers left without
// allocations and increments the generation of the others.
func (w *planWrite) consumerGenerations(ctx context.Context) error {
	for _, cp := range w.plan.consumers {
		if !cp.touched {
			continue
		}
		cc := cp.change
		if !cp.keeps {
			if err := w.tx.DeleteConsumer(ctx, cc.c.id); err != nil {
				return fmt.Errorf("delete consumer %s: %w", cp.req.ConsumerUUID, err)
			}
			cc.deleted = true
			continue
		}
		if err := bumpConsumerGeneration(ctx, w.tx, cc.c, cc.generation, w.now); err != nil {
			return err
		}
		cc.generation++
	}
	return nil
}

// applyChanges mirrors a plan's write in the state.
func applyChanges(st *state, ids *externalIDs, changes []*consumerChange, now time.Time) {
	ids.apply()
	for _, cc := range changes {
		c := cc.c
		c.projectID, c.userID, c.consumerType = cc.project, cc.user, cc.kind
		// As storage: a new consumer's generation increment sets it too.
		if cc.changed {
			c.updatedAt = stampOf(now)
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
}

// writtenConsumer is a consumer as exec leaves it, before apply.
type writtenConsumer struct {
	c                   *consumer
	isNew, changed      bool
	project, user, kind string
}

// writeConsumer creates cp's consumer or updates its project, user and
// type when the request changes them (without a generation increment).
func (w *planWrite) writeConsumer(ctx context.Context, cp *consumerPlan) (writtenConsumer, error) {
	req := cp.req
	row := store.ConsumerRow{UUID: req.ConsumerUUID}
	var err error
	if row.ProjectID, err = w.ids.project(ctx, w.tx, req.ProjectID); err != nil {
		return writtenConsumer{}, err
	}
	if row.UserID, err = w.ids.user(ctx, w.tx, req.UserID); err != nil {
		return writtenConsumer{}, err
	}
	if req.ConsumerType != "" {
		if row.ConsumerTypeID, err = w.ids.consumerType(ctx, w.tx, req.ConsumerType, w.now); err != nil {
			return writtenConsumer{}, err
		}
	}
	if c := cp.existing; c != nil {
		return w.updateConsumer(ctx, c, row, req)
	}
	row.CreatedAt = w.now
	id, err := w.tx.InsertConsumer(ctx, row)
	if err != nil {
		return writtenConsumer{}, fmt.Errorf("insert consumer %s: %w", req.ConsumerUUID, err)
	}
	c := &consumer{id: id, uuid: req.ConsumerUUID, createdAt: stampOf(w.now)}
	return writtenConsumer{c: c, isNew: true, project: req.ProjectID, user: req.UserID, kind: req.ConsumerType}, nil
}

// updateConsumer writes row's project, user and type to the existing
// consumer c when they differ from c's; a request without a type keeps
// c's.
func (w *planWrite) updateConsumer(ctx context.Context, c *consumer, row store.ConsumerRow, req store.ConsumerAllocations) (writtenConsumer, error) {
	out := writtenConsumer{c: c, project: req.ProjectID, user: req.UserID, kind: c.consumerType}
	if req.ConsumerType != "" {
		out.kind = req.ConsumerType
	}
	if out.project == c.projectID && out.user == c.userID && out.kind == c.consumerType {
		return out, nil
	}
	if row.ConsumerTypeID == 0 && c.consumerType != "" {
		row.ConsumerTypeID = w.plan.st.consumerTypes[c.consumerType]
	}
	row.ID, row.Generation, row.UpdatedAt = c.id, c.generation, w.now
	err := w.tx.UpdateConsumer(ctx, row)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return writtenConsumer{}, concurrentConsumerUpdate()
	case err != nil:
		return writtenConsumer{}, fmt.Errorf("update consumer %s: %w", c.uuid, err)
	}
	out.changed = true
	return out, nil
}

// externalIDs finds or creates project, user and consumer type rows within
// one transaction, remembering what it created for apply.
type externalIDs struct {
	st                     *state
	projects, users, types map[string]int64
}

func (x *externalIDs) project(ctx context.Context, tx store.Tx, ext string) (int64, error) {
	return ensureExternal(ctx, tx, x.st.projects, x.projects, store.Tx.InsertProject, ext)
}

func (x *externalIDs) user(ctx context.Context, tx store.Tx, ext string) (int64, error) {
	return ensureExternal(ctx, tx, x.st.users, x.users, store.Tx.InsertUser, ext)
}

// ensureExternal returns ext's row id, inserting the row when neither
// the state (known) nor this transaction (created) has it.
func ensureExternal(ctx context.Context, tx store.Tx, known, created map[string]int64,
	insert func(store.Tx, context.Context, string) (int64, error), ext string) (int64, error) {
	if id, ok := lookupID(known, created, ext); ok {
		return id, nil
	}
	id, err := insert(tx, ctx, ext)
	if err != nil {
		return 0, fmt.Errorf("insert %s: %w", ext, err)
	}
	created[ext] = id
	return id, nil
}

func (x *externalIDs) consumerType(ctx context.Context, tx store.Tx, name string, now time.Time) (int64, error) {
	if id, ok := lookupID(x.st.consumerTypes, x.types, name); ok {
		return id, nil
	}
	id, err := tx.InsertConsumerType(ctx, store.ConsumerTypeRow{Name: name, CreatedAt: now})
	if err != nil {
		return 0, fmt.Errorf("insert consumer type %s: %w", name, err)
	}
	x.types[name] = id
	return id, nil
}

// lookupID finds key's row id in known (the state) or created (earlier in
// this transaction).
func lookupID(known, created map[string]int64, key string) (int64, bool) {
	if id, ok := known[key]; ok {
		return id, true
	}
	id, ok := created[key]
	return id, ok
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
