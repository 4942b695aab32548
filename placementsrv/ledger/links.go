package ledger

import (
	"context"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// linked is what providers link to: a trait or an aggregate.
type linked interface {
	comparable
	// linkedProviders is the other side of the links.
	linkedProviders() map[*provider]struct{}
	linkID() int64
	// linkName names it in errors.
	linkName() string
}

func (n *named) linkedProviders() map[*provider]struct{}     { return n.providers }
func (n *named) linkID() int64                               { return n.id }
func (n *named) linkName() string                            { return n.name }
func (a *aggregate) linkedProviders() map[*provider]struct{} { return a.members }
func (a *aggregate) linkID() int64                           { return a.id }
func (a *aggregate) linkName() string                        { return a.uuid }

// linkKind is one many-to-many relation of providers, to traits or to
// aggregates: the provider's side in memory and the rows of one link.
type linkKind[T linked] struct {
	links       func(*provider) map[T]struct{}
	add, remove func(tx store.Tx, ctx context.Context, providerID, id int64) error
	// added and removed word a failed add or remove: %[1]s is the
	// provider's uuid, %[2]s the member's name.
	added, removed string
}

var traitKind = linkKind[*trait]{links: func(p *provider) map[*trait]struct{} { return p.traits },
	add: store.Tx.AddProviderTrait, remove: store.Tx.RemoveProviderTrait,
	added: "add trait %[2]s to provider %[1]s", removed: "remove trait %[2]s from provider %[1]s"}

var aggregateKind = linkKind[*aggregate]{links: func(p *provider) map[*aggregate]struct{} { return p.aggregates },
	add: store.Tx.AddProviderAggregate, remove: store.Tx.RemoveProviderAggregate,
	added: "add provider %[1]s to aggregate %[2]s", removed: "remove provider %[1]s from aggregate %[2]s"}

// diff returns the members of want (distinct, in order) that p lacks and
// p's links that keep, the set of want, lacks.
func (k linkKind[T]) diff(p *provider, want []T, keep map[T]struct{}) (add, drop []T) {
	have := k.links(p)
	for _, x := range want {
		if _, ok := have[x]; !ok {
			add = append(add, x)
		}
	}
	for x := range have {
		if _, ok := keep[x]; !ok {
			drop = append(drop, x)
		}
	}
	return add, drop
}

// write issues one statement per link dropped, then one per link added.
// The two sets are disjoint, so the order changes nothing stored.
func (k linkKind[T]) write(ctx context.Context, tx store.Tx, p *provider, add, drop []T) error {
	if err := k.each(ctx, tx, p, drop, k.remove, k.removed); err != nil {
		return err
	}
	return k.each(ctx, tx, p, add, k.add, k.added)
}

// each runs op for p and every member of xs, stopping at the first error,
// which it words with what.
func (k linkKind[T]) each(ctx context.Context, tx store.Tx, p *provider, xs []T,
	op func(store.Tx, context.Context, int64, int64) error, what string) error {
	for _, x := range xs {
		if err := op(tx, ctx, p.id, x.linkID()); err != nil {
			return fmt.Errorf(what+": %[3]w", p.uuid, x.linkName(), err)
		}
	}
	return nil
}

// apply makes memory match the links written: both sides of each.
func (k linkKind[T]) apply(p *provider, add, drop []T) {
	for _, x := range drop {
		delete(k.links(p), x)
		delete(x.linkedProviders(), p)
	}
	for _, x := range add {
		k.link(p, x)
	}
}

// link links p and x in memory, on both sides.
func (k linkKind[T]) link(p *provider, x T) {
	k.links(p)[x] = struct{}{}
	x.linkedProviders()[p] = struct{}{}
}
