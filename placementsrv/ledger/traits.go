package ledger

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (t *trait) record() store.Trait {
	return store.Trait{Name: t.name, CreatedAt: t.createdAt, UpdatedAt: t.updatedAt}
}

func traitNotFound(names string) error {
	return store.Errorf(store.ErrNotFound, "No such trait(s): "+names+".")
}

// ListTraits returns the traits matching f. Placement answers an IN query
// from the name index (name order) and everything else from a table scan
// (id order); the same orders are kept here.
func (l *Ledger) ListTraits(ctx context.Context, f store.TraitFilter) ([]store.Trait, error) {
	var out []*trait
	err := l.read(func(st *state) error {
		if f.NameIn != nil {
			seen := make(map[string]bool, len(f.NameIn))
			for _, n := range f.NameIn {
				if t, ok := st.traits[n]; ok && !seen[n] {
					seen[n] = true
					out = append(out, t)
				}
			}
		} else {
			out = make([]*trait, 0, len(st.traits))
			for _, t := range st.traits {
				out = append(out, t)
			}
		}
		out = filterTraits(out, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.NameIn != nil {
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	} else {
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	}
	recs := make([]store.Trait, len(out))
	for i, t := range out {
		recs[i] = t.record()
	}
	return recs, nil
}

// filterTraits applies the prefix and association filters in place. It
// runs under the read lock because it looks at trait.providers.
func filterTraits(ts []*trait, f store.TraitFilter) []*trait {
	var pattern []rune
	if f.NamePrefix != "" {
		pattern = []rune(f.NamePrefix + "%")
	}
	kept := ts[:0]
	for _, t := range ts {
		if pattern != nil && !likeMatch(pattern, []rune(t.name)) {
			continue
		}
		if f.Associated != nil && (len(t.providers) > 0) != *f.Associated {
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// likeMatch reports whether s matches an SQL LIKE pattern as SQLite
// evaluates it without ESCAPE: "%" is any run of characters, "_" any one
// character, and ASCII letters compare case-insensitively.
func likeMatch(p, s []rune) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '%':
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '_' || asciiFold(p[pi]) == asciiFold(s[si])):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

func asciiFold(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + ('a' - 'A')
	}
	return r
}

// GetTrait returns one trait.
func (l *Ledger) GetTrait(ctx context.Context, name string) (store.Trait, error) {
	return readRecord(l, name, (*state).lookupTrait, (*trait).record)
}

// lookupTrait finds a trait by name or returns traitNotFound.
func (st *state) lookupTrait(name string) (*trait, error) {
	t, ok := st.traits[name]
	if !ok {
		return nil, traitNotFound(name)
	}
	return t, nil
}

// EnsureTrait creates the trait when it does not exist yet.
func (l *Ledger) EnsureTrait(ctx context.Context, name string) (store.Trait, bool, error) {
	var out store.Trait
	created := false
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		if t, ok := st.traits[name]; ok {
			out = t.record()
			return nil, nil
		}
		id, err := tx.InsertTrait(ctx, store.TraitRow{Name: name, CreatedAt: now})
		if err != nil {
			return nil, fmt.Errorf("insert trait %s: %w", name, err)
		}
		t := &trait{newNamed(id, name, false, now, time.Time{})}
		out, created = t.record(), true
		return func() { st.traits[name] = t }, nil
	})
	return out, created, err
}

// DeleteTrait removes a custom trait that no provider has.
func (l *Ledger) DeleteTrait(ctx context.Context, name string) error {
	return l.write(ctx, func(tx store.Tx, _ time.Time) (func(), error) {
		st := l.st
		t, ok := st.traits[name]
		if !ok {
			return nil, traitNotFound(name)
		}
		if !strings.HasPrefix(name, standard.CustomPrefix) {
			return nil, store.Errorf(store.ErrStandard, "Cannot delete standard trait "+name+".")
		}
		if len(t.providers) > 0 {
			return nil, store.Errorf(store.ErrTraitInUse, "The trait "+name+" is in use by a resource provider.")
		}
		if err := tx.DeleteTrait(ctx, t.id); err != nil {
			return nil, fmt.Errorf("delete trait %s: %w", name, err)
		}
		return func() { delete(st.traits, name) }, nil
	})
}

// missingTraits returns the names that are not traits, sorted and without
// duplicates.
func missingTraits(st *state, names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := st.traits[n]; !ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ProviderTraits returns a provider and its traits.
// The traits come in trait id order, the order of Placement's
// provider-trait index.
func (l *Ledger) ProviderTraits(ctx context.Context, uuid string) (store.Provider, []store.Trait, error) {
	return readProvider(l, uuid, func(p *provider) []store.Trait {
		return sortedByID(p.traits, (*trait).rowID, (*trait).record)
	})
}

// SetProviderTraits replaces a provider's traits, guarded by generation.
func (l *Ledger) SetProviderTraits(ctx context.Context, uuid string, generation int64, names []string) (store.Provider, []store.Trait, error) {
	var p store.Provider
	var out []store.Trait
	err := l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		st := l.st
		pr, err := st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		if pr.generation != generation {
			return nil, staleProviderGeneration()
		}
		if missing := missingTraits(st, names); len(missing) > 0 {
			return nil, store.Errorf(store.ErrInvalid, "No such trait "+strings.Join(missing, ", "))
		}
		want := make([]*trait, 0, len(names))
		keep := make(map[*trait]struct{}, len(names))
		for _, n := range names {
			t := st.traits[n]
			if _, dup := keep[t]; !dup {
				want = append(want, t)
				keep[t] = struct{}{}
			}
		}
		out = sortedTraitRecords(keep)
		apply, err := l.replaceProviderTraits(ctx, tx, now, pr, want, keep)
		if err != nil {
			return nil, err
		}
		p = pr.record()
		if apply != nil {
			p.Generation++
			p.UpdatedAt = now
		}
		return apply, nil
	})
	return p, out, err
}

// DeleteProviderTraits removes all of a provider's traits.
func (l *Ledger) DeleteProviderTraits(ctx context.Context, uuid string) error {
	return l.write(ctx, func(tx store.Tx, now time.Time) (func(), error) {
		pr, err := l.st.lookupProvider(uuid)
		if err != nil {
			return nil, err
		}
		return l.replaceProviderTraits(ctx, tx, now, pr, nil, nil)
	})
}

// replaceProviderTraits issues the writes that make want (distinct; keep
// is its set) p's trait set and increments p's generation,
// compare-and-swap, when the set changes. It returns nil apply when
// nothing changes.
func (l *Ledger) replaceProviderTraits(ctx context.Context, tx store.Tx, now time.Time, p *provider, want []*trait, keep map[*trait]struct{}) (func(), error) {
	add, drop := traitKind.diff(p, want, keep)
	if len(add) == 0 && len(drop) == 0 {
		return nil, nil
	}
	if err := traitKind.write(ctx, tx, p, add, drop); err != nil {
		return nil, err
	}
	if err := bumpGeneration(ctx, tx, p, p.generation, now); err != nil {
		return nil, err
	}
	return func() {
		traitKind.apply(p, add, drop)
		p.generation++
		p.updatedAt = now
	}, nil
}

func sortedTraitRecords(set map[*trait]struct{}) []store.Trait {
	out := make([]store.Trait, 0, len(set))
	for t := range set {
		out = append(out, t.record())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// staleProviderGeneration is Placement's answer when a request carries a
// provider generation that is not the current one.
func staleProviderGeneration() error {
	return store.Errorf(store.ErrConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
}
