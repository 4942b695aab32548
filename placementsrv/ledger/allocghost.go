package ledger

import (
	"context"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// leaveConsumers writes what upstream leaves behind when an allocation
// write names an unknown provider: ensure_consumer commits each new
// consumer (generation 0, with its project, user and type) in its own
// transaction before the providers are looked up, and only a failure of
// the final write removes them again. The consumers stay without
// allocations until a write for them ends with none. It returns nil when
// the plan creates no consumer.
func (plan *allocPlan) leaveConsumers(ctx context.Context, tx store.Tx, now time.Time) (func(), error) {
	w := planWrite{
		plan: plan, tx: tx, now: now,
		ids: &externalIDs{st: plan.st, projects: map[string]int64{}, users: map[string]int64{}, types: map[string]int64{}},
	}
	for _, cp := range plan.consumers {
		if cp.existing != nil {
			continue
		}
		ch, err := w.writeConsumer(ctx, cp)
		if err != nil {
			return nil, err
		}
		w.changes = append(w.changes, &consumerChange{c: ch.c, isNew: true, project: ch.project, user: ch.user, kind: ch.kind})
	}
	if len(w.changes) == 0 {
		return nil, nil
	}
	st, ids, changes := plan.st, w.ids, w.changes
	return func() { applyChanges(st, ids, changes, now) }, nil
}

// unknownProviderAnswer handles newAllocPlan's error inside a write: for
// an unknown provider it leaves the new consumers and keeps the error in
// answer, for the caller to return once the write committed.
func unknownProviderAnswer(ctx context.Context, tx store.Tx, now time.Time, plan *allocPlan, err error, answer *error) (func(), error) {
	unknown, ok := err.(*unknownProviderError)
	if !ok {
		return nil, err
	}
	apply, werr := plan.leaveConsumers(ctx, tx, now)
	if werr != nil {
		return nil, werr
	}
	if apply == nil {
		return nil, unknown.err
	}
	*answer = unknown.err
	return apply, nil
}
