package ledger

import (
	"fmt"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
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
	rule  store.CapacityRule
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
	// change is what exec wrote for the consumer.
	change *consumerChange
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
// create_allocation_list). When a provider is unknown it returns the plan
// with the error: upstream has created the new consumers by then and
// keeps them (see leaveConsumers).
func newAllocPlan(st *state, reqs []store.ConsumerAllocations, rule store.CapacityRule) (*allocPlan, error) {
	plan := &allocPlan{st: st, removed: map[provClass]int64{}, added: map[provClass]int64{}, rule: rule}
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
				return plan, &unknownProviderError{store.Errorf(store.ErrInvalid, "Allocation for resource provider '"+a.ProviderUUID+"' that does not exist.")}
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
		if e.used < inv.MinUnit || e.used > inv.MaxUnit || (inv.StepSize > 0 && e.used%inv.StepSize != 0) {
			return store.Errorf(store.ErrCapacityExceeded, "Unable to create allocation for '"+e.className+"' on resource provider '"+e.prov.uuid+"'. The requested amount would violate inventory constraints.")
		}
		used := e.prov.usage[e.class] - plan.removed[key]
		capacity := float64(inv.Total-inv.Reserved) * inv.AllocationRatio
		if (capacity < float64(used+e.used) || capacity < float64(used+sums[key])) && !plan.noWorse(key, used+sums[key]) {
			return store.Errorf(store.ErrCapacityExceeded, "Unable to create allocation for '"+e.className+"' on resource provider '"+e.prov.uuid+"'. The requested amount would exceed the capacity.")
		}
	}
	return nil
}

// noWorse reports whether the rule lets a (provider, class) end at after
// though over capacity: its usage before the write (before the touched
// consumers' allocations are freed) was positive and is not exceeded.
func (plan *allocPlan) noWorse(key provClass, after int64) bool {
	if plan.rule != store.CapacityNoWorse {
		return false
	}
	before := key.p.usage[key.c]
	return before > 0 && after <= before
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
	// Placement names the classes in the order of a Python set of their
	// ids, added in request order.
	ids := make([]int64, 0, len(plan.entries))
	byID := make(map[int64]string, len(classes))
	for _, e := range plan.entries {
		ids = append(ids, e.class.id)
		byID[e.class.id] = e.class.name
	}
	var names []string
	for _, id := range pyfmt.IntSetOrder(ids) {
		names = append(names, byID[id])
	}
	return store.Errorf(store.ErrCapacityExceeded, "Inventory for '"+strings.Join(names, ", ")+"' on resource provider '"+strings.Join(missing, ", ")+"' invalid.")
}

// usageAfter is the amount allocated of c on p once the plan is applied.
func (plan *allocPlan) usageAfter(p *provider, c *resourceClass) int64 {
	key := provClass{p, c}
	return p.usage[c] - plan.removed[key] + plan.added[key]
}

// unknownProviderError is newAllocPlan's answer for an allocation on a
// provider that does not exist; the plan returned with it still says which
// consumers upstream has created.
type unknownProviderError struct{ err error }

func (e *unknownProviderError) Error() string { return e.err.Error() }
func (e *unknownProviderError) Unwrap() error { return e.err }
