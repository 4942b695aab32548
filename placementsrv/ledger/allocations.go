package ledger

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// ConsumerAllocations returns the consumer and its allocations in the
// order they were written.
func (l *Ledger) ConsumerAllocations(ctx context.Context, consumerUUID string) (store.HeldAllocations, error) {
	var out store.HeldAllocations
	err := l.read(func(st *state) error {
		c, ok := st.consumers[consumerUUID]
		if !ok || len(c.allocs) == 0 {
			return store.Errorf(store.ErrNotFound, "No allocations for consumer '"+consumerUUID+"'")
		}
		out.Consumer = c.record()
		out.Allocations = make([]store.Allocation, 0, len(c.allocs))
		for _, a := range c.allocs {
			r := a.record()
			r.ProviderGeneration = a.provider.generation
			out.Allocations = append(out.Allocations, r)
		}
		return nil
	})
	return out, err
}

// ProviderAllocations returns the provider and its allocations grouped by
// consumer, consumers ordered by their oldest allocation on it.
func (l *Ledger) ProviderAllocations(ctx context.Context, uuid string) (store.Provider, []store.HeldAllocations, error) {
	return readProvider(l, uuid, heldAllocations)
}

// heldAllocations groups p's allocations by consumer, consumers ordered by
// their oldest allocation on p.
func heldAllocations(p *provider) []store.HeldAllocations {
	var out []store.HeldAllocations
	index := map[*consumer]int{}
	allocs := make([]*allocation, 0, len(p.allocs))
	for a := range p.allocs {
		allocs = append(allocs, a)
	}
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].id < allocs[j].id })
	for _, a := range allocs {
		i, ok := index[a.consumer]
		if !ok {
			i = len(out)
			index[a.consumer] = i
			out = append(out, store.HeldAllocations{Consumer: a.consumer.record()})
		}
		out[i].Allocations = append(out[i].Allocations, a.record())
	}
	return out
}

// ReplaceAllocations writes the allocations of several consumers in one
// transaction (PUT and POST /allocations) under the strict capacity rule.
func (l *Ledger) ReplaceAllocations(ctx context.Context, reqs []store.ConsumerAllocations) error {
	return l.ReplaceAllocationsUnder(ctx, store.CapacityStrict, reqs)
}

// ReplaceAllocationsUnder is ReplaceAllocations under rule.
func (l *Ledger) ReplaceAllocationsUnder(ctx context.Context, rule store.CapacityRule, reqs []store.ConsumerAllocations) error {
	// answer is a failure that still commits (an unknown provider).
	var answer error
	err := l.writeUsage(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		answer = nil
		st := l.st
		plan, err := newAllocPlan(st, reqs, rule)
		if err != nil {
			return unknownProviderAnswer(ctx, tx, now, plan, err, &answer)
		}
		if err := plan.check(func(p *provider) map[*resourceClass]*inventory { return p.inventories }); err != nil {
			return nil, err
		}
		gens := newGenerations()
		apply, err := plan.exec(ctx, tx, now, gens)
		if err != nil {
			return nil, err
		}
		return func() {
			apply()
			gens.apply(now)
			for p := range gens.cur {
				st.usageLog = append(st.usageLog, p)
			}
		}, nil
	})
	if err != nil {
		return err
	}
	return answer
}

// DeleteConsumerAllocations removes all of a consumer's allocations and
// the consumer itself. Provider and consumer generations are untouched, as
// upstream.
func (l *Ledger) DeleteConsumerAllocations(ctx context.Context, consumerUUID string) error {
	return l.writeUsage(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		c, ok := l.st.consumers[consumerUUID]
		if !ok || len(c.allocs) == 0 {
			return nil, store.Errorf(store.ErrNotFound, "No allocations for consumer '"+consumerUUID+"'")
		}
		if err := tx.DeleteConsumerAllocations(ctx, c.id); err != nil {
			return nil, fmt.Errorf("delete allocations of consumer %s: %w", c.uuid, err)
		}
		if err := tx.DeleteConsumer(ctx, c.id); err != nil {
			return nil, fmt.Errorf("delete consumer %s: %w", c.uuid, err)
		}
		st := l.st
		return func() {
			detachAllocations(st, c)
			delete(st.consumers, c.uuid)
		}, nil
	})
}

// detachAllocations removes c's allocations from their providers' sets
// and usage, and clears c.allocs.
func detachAllocations(st *state, c *consumer) {
	for _, a := range c.allocs {
		p := a.provider
		st.usageLog = append(st.usageLog, p)
		delete(p.allocs, a)
		if p.usage[a.class] -= a.used; p.usage[a.class] == 0 {
			delete(p.usage, a.class)
		}
	}
	c.allocs = nil
}

// attachAllocation links a into its provider's set and usage.
func attachAllocation(st *state, a *allocation) {
	p := a.provider
	st.usageLog = append(st.usageLog, p)
	p.allocs[a] = struct{}{}
	p.usage[a.class] += a.used
}

// generations tracks provider generations within one write transaction;
// every increment is a compare-and-swap in the backend, so the write would
// fail rather than lose an update under concurrent writers.
type generations struct {
	cur map[*provider]int64
}

func newGenerations() *generations { return &generations{cur: map[*provider]int64{}} }

// get returns p's generation as of this transaction.
func (g *generations) get(p *provider) int64 {
	if v, ok := g.cur[p]; ok {
		return v
	}
	return p.generation
}

// bump increments p's generation in the backend, checking the old value.
func (g *generations) bump(ctx context.Context, tx store.Tx, p *provider, now time.Time) error {
	old := g.get(p)
	if err := bumpGeneration(ctx, tx, p, old, now); err != nil {
		return err
	}
	g.cur[p] = old + 1
	return nil
}

// apply copies the tracked generations into the state.
func (g *generations) apply(now time.Time) {
	for p, v := range g.cur {
		p.generation = v
		p.updatedAt = now
	}
}
