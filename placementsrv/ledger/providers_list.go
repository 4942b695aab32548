package ledger

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// providerMatcher is a store.ProviderFilter resolved against the state:
// names became records, so matching one provider is map lookups only.
type providerMatcher struct {
	name, uuid  string
	root        *provider // in_tree
	required    [][]*trait
	forbidden   []*trait
	memberOf    [][]*aggregate
	notMemberOf []*aggregate
	resources   []classAmount
}

type classAmount struct {
	class  *resourceClass
	amount int64
}

// ListProviders returns the providers matching f, ordered by id as
// upstream's unordered query returns them.
func (l *Ledger) ListProviders(ctx context.Context, f store.ProviderFilter) ([]store.Provider, error) {
	var out []store.Provider
	err := l.read(func(st *state) error {
		m, any, err := st.compileFilter(f)
		if err != nil || !any {
			return err
		}
		cands := st.providerList
		var one [1]*provider
		// A uuid or name filter picks at most one provider from its index.
		var index map[string]*provider
		var key string
		switch {
		case f.UUID != "":
			index, key = st.providers, f.UUID
		case f.Name != "":
			index, key = st.providersByName, f.Name
		}
		if index != nil {
			p, ok := index[key]
			if !ok {
				return nil
			}
			one[0] = p
			cands = one[:]
		}
		if m.trivial() {
			out = make([]store.Provider, 0, len(cands))
		}
		for _, p := range cands {
			if m.match(p) {
				out = append(out, p.record())
			}
		}
		return nil
	})
	return out, err
}

// compileFilter resolves f in upstream's order. It reports false when a
// filter can match no provider at all, which (as upstream) ends the search
// before later filters' names are checked.
func (st *state) compileFilter(f store.ProviderFilter) (*providerMatcher, bool, error) {
	m := &providerMatcher{name: f.Name, uuid: f.UUID}
	if f.InTree != "" {
		p, ok := st.providers[f.InTree]
		if !ok {
			return nil, false, nil
		}
		m.root = p.root
	}
	if len(f.Required) > 0 {
		for _, group := range f.Required {
			ts := make([]*trait, 0, len(group))
			for _, name := range group {
				t, ok := st.traits[name]
				if !ok {
					return nil, false, store.Errorf(store.ErrUnknownTrait, "No such trait(s): "+name+".")
				}
				ts = append(ts, t)
			}
			m.required = append(m.required, ts)
		}
		if !someProviderInEvery(m.required, traitKind) {
			return nil, false, nil
		}
	}
	for _, name := range f.Forbidden {
		t, ok := st.traits[name]
		if !ok {
			return nil, false, store.Errorf(store.ErrUnknownTrait, "No such trait(s): "+name+".")
		}
		m.forbidden = append(m.forbidden, t)
	}
	if len(f.MemberOf) > 0 {
		for _, group := range f.MemberOf {
			var as []*aggregate
			for _, u := range group {
				if a, ok := st.aggregates[u]; ok {
					as = append(as, a)
				}
			}
			if len(as) == 0 {
				return nil, false, nil
			}
			m.memberOf = append(m.memberOf, as)
		}
		if !someProviderInEvery(m.memberOf, aggregateKind) {
			return nil, false, nil
		}
	}
	for _, u := range f.NotMemberOf {
		if a, ok := st.aggregates[u]; ok {
			m.notMemberOf = append(m.notMemberOf, a)
		}
	}
	for _, ra := range f.Resources {
		c, ok := st.classes[ra.Class]
		if !ok {
			return nil, false, store.Errorf(store.ErrUnknownResourceClass, "No such resource class "+ra.Class+".")
		}
		m.resources = append(m.resources, classAmount{c, ra.Amount})
	}
	return m, true, nil
}

// trivial reports whether m filters only by name or uuid, so that every
// candidate will match.
func (m *providerMatcher) trivial() bool {
	return m.root == nil && len(m.required) == 0 && len(m.forbidden) == 0 && len(m.memberOf) == 0 &&
		len(m.notMemberOf) == 0 && len(m.resources) == 0
}

// match applies every filter to p, cheapest first.
func (m *providerMatcher) match(p *provider) bool {
	if m.uuid != "" && p.uuid != m.uuid {
		return false
	}
	if m.name != "" && p.name != m.name {
		return false
	}
	if m.root != nil && p.root != m.root {
		return false
	}
	if len(m.required) > 0 && !inEveryGroup(p.traits, m.required) {
		return false
	}
	for _, t := range m.forbidden {
		if _, ok := p.traits[t]; ok {
			return false
		}
	}
	if len(m.memberOf) > 0 && !inEveryGroup(p.aggregates, m.memberOf) {
		return false
	}
	for _, a := range m.notMemberOf {
		if _, ok := p.aggregates[a]; ok {
			return false
		}
	}
	for _, ra := range m.resources {
		if !canAllocate(p, ra.class, ra.amount) {
			return false
		}
	}
	return true
}

// canAllocate is upstream's capacity check for one class: the amount fits
// in the free capacity (computed in floating point, as upstream's SQL
// does) and respects min_unit, max_unit and step_size.
func canAllocate(p *provider, c *resourceClass, amount int64) bool {
	inv, ok := p.inventories[c]
	if !ok {
		return false
	}
	if amount < inv.MinUnit || amount > inv.MaxUnit || inv.StepSize <= 0 || amount%inv.StepSize != 0 {
		return false
	}
	free := float64(inv.Total-inv.Reserved) * inv.AllocationRatio
	return float64(p.usage[c])+float64(amount) <= free
}
