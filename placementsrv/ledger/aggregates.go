package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// ProviderAggregates returns a provider and its aggregate uuids.
func (l *Ledger) ProviderAggregates(ctx context.Context, uuid string) (store.Provider, []string, error) {
	return readProvider(l, uuid, func(p *provider) []string { return aggregatesByID(p.aggregates) })
}

// aggregatesByID lists aggregate uuids in id order: the order in which
// they were first seen, and the order Placement's membership index gives.
func aggregatesByID(set map[*aggregate]struct{}) []string {
	return sortedByID(set, func(a *aggregate) int64 { return a.id }, func(a *aggregate) string { return a.uuid })
}

// SetProviderAggregates replaces a provider's aggregates, creating unknown
// aggregates on the way; see store.AggregateStore.
func (l *Ledger) SetProviderAggregates(ctx context.Context, uuid string, generation *int64, uuids []string) (store.Provider, []string, error) {
	var p store.Provider
	var out []string
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		pr, err := st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		if generation != nil && *generation != pr.generation {
			return nil, staleProviderGeneration()
		}
		want, created, err := ensureAggregates(ctx, tx, st, uuids)
		if err != nil {
			return nil, err
		}
		keep := make(map[*aggregate]struct{}, len(want))
		for _, a := range want {
			keep[a] = struct{}{}
		}
		add, drop := aggregateKind.diff(pr, want, keep)
		if err := aggregateKind.write(ctx, tx, pr, add, drop); err != nil {
			return nil, err
		}
		bump := generation != nil
		if bump {
			if err := bumpGeneration(ctx, tx, pr, pr.generation, now); err != nil {
				return nil, err
			}
		}
		p, out = pr.record(), aggregatesByID(keep)
		if bump {
			p.Generation++
			p.UpdatedAt = now
		}
		return func() {
			for _, a := range created {
				st.aggregates[a.uuid] = a
			}
			aggregateKind.apply(pr, add, drop)
			if bump {
				pr.generation++
				pr.updatedAt = now
			}
		}, nil
	})
	return p, out, err
}

// ensureAggregates resolves uuids (deduplicated, in order) to aggregates,
// inserting the unknown ones. The new records are returned separately so
// that apply can publish them after commit.
func ensureAggregates(ctx context.Context, tx store.Tx, st *state, uuids []string) (all, created []*aggregate, err error) {
	seen := make(map[string]*aggregate, len(uuids))
	for _, u := range uuids {
		if _, dup := seen[u]; dup {
			continue
		}
		a, ok := st.aggregates[u]
		if !ok {
			id, err := tx.InsertAggregate(ctx, u)
			if err != nil {
				return nil, nil, fmt.Errorf("insert aggregate %s: %w", u, err)
			}
			a = &aggregate{id: id, uuid: u, members: map[*provider]struct{}{}}
			created = append(created, a)
		}
		seen[u] = a
		all = append(all, a)
	}
	return all, created, nil
}
