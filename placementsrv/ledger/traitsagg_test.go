package ledger

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	rpA  = "11111111-1111-1111-1111-111111111111"
	rpB  = "22222222-2222-2222-2222-222222222222"
	aggX = "aaaaaaaa-0000-0000-0000-000000000001"
	aggY = "aaaaaaaa-0000-0000-0000-000000000002"
	aggZ = "aaaaaaaa-0000-0000-0000-000000000003"
)

// newTAStore opens a ledger over fresh storage with providers A and B.
func newTAStore(t *testing.T) (*Ledger, string) {
	t.Helper()
	db := newDB(t)
	s := openAt(t, db)
	t.Cleanup(func() { s.Close() })
	for _, p := range []store.NewProvider{{UUID: rpA, Name: "a"}, {UUID: rpB, Name: "b"}} {
		if _, err := s.CreateProvider(context.Background(), p); err != nil {
			t.Fatalf("create provider: %v", err)
		}
	}
	return s, db
}

func mustKind(t *testing.T, err, kind error, detail string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want kind %v", err, kind)
	}
	if store.Detail(err) != detail {
		t.Fatalf("detail %q, want %q", store.Detail(err), detail)
	}
}

func traitNamesOf(ts []store.Trait) string {
	n := make([]string, len(ts))
	for i, t := range ts {
		n[i] = t.Name
	}
	return strings.Join(n, ",")
}

// checkLinks verifies that the in-memory cross references agree: every
// provider trait or aggregate is known and links back, and nothing links
// to a provider that is not in the state.
func checkLinks(t *testing.T, s *Ledger) {
	t.Helper()
	err := s.read(func(st *state) error {
		for _, p := range st.providers {
			for tr := range p.traits {
				if st.traits[tr.name] != tr {
					t.Errorf("provider %s has unknown trait %s", p.uuid, tr.name)
				}
				if _, ok := tr.providers[p]; !ok {
					t.Errorf("trait %s does not link back to %s", tr.name, p.uuid)
				}
			}
			for a := range p.aggregates {
				if st.aggregates[a.uuid] != a {
					t.Errorf("provider %s has unknown aggregate %s", p.uuid, a.uuid)
				}
				if _, ok := a.members[p]; !ok {
					t.Errorf("aggregate %s does not link back to %s", a.uuid, p.uuid)
				}
			}
		}
		for _, tr := range st.traits {
			for p := range tr.providers {
				if _, ok := p.traits[tr]; !ok || st.providers[p.uuid] != p {
					t.Errorf("trait %s links to %s which lacks it", tr.name, p.uuid)
				}
			}
		}
		for _, a := range st.aggregates {
			for p := range a.members {
				if _, ok := p.aggregates[a]; !ok || st.providers[p.uuid] != p {
					t.Errorf("aggregate %s links to %s which lacks it", a.uuid, p.uuid)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLikeMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"CUSTOM_%", "CUSTOM_A", true},
		{"custom_%", "CUSTOM_A", true},
		{"CUSTOM_%", "CUSTOMXA", true}, // "_" is a wildcard
		{"CUSTOM_%", "CUSTOM", false},
		{"%", "", true},
		{"C%A%", "CXXAYY", true},
		{"C%A%", "CXXBYY", false},
		{"__%", "A", false},
		{"Ä%", "ä", false}, // only ASCII folds, as in SQLite
		{"ä_%", "äb", true},
		{"%B%", "AAAB", true},
	}
	for _, tc := range tests {
		if got := likeMatch([]rune(tc.pattern), []rune(tc.s)); got != tc.want {
			t.Errorf("likeMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

func TestTraitsStore(t *testing.T) {
	ctx := context.Background()
	s, db := newTAStore(t)
	for _, n := range []string{"CUSTOM_B", "CUSTOM_A", "CUSTOM_AB"} {
		tr, created, err := s.EnsureTrait(ctx, n)
		if err != nil || !created || tr.Name != n || tr.CreatedAt.IsZero() {
			t.Fatalf("ensure %s: %+v %v %v", n, tr, created, err)
		}
	}
	if _, created, err := s.EnsureTrait(ctx, "CUSTOM_A"); err != nil || created {
		t.Fatalf("ensure existing: %v %v", created, err)
	}
	if _, _, err := s.EnsureTrait(ctx, "HW_CPU_X86_SSE"); err != nil {
		t.Fatalf("ensure standard: %v", err)
	}

	list := func(f store.TraitFilter) string {
		t.Helper()
		ts, err := s.ListTraits(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return traitNamesOf(ts)
	}
	if got := list(store.TraitFilter{NamePrefix: "custom_"}); got != "CUSTOM_B,CUSTOM_A,CUSTOM_AB" {
		t.Errorf("prefix: %s", got)
	}
	if got := list(store.TraitFilter{NameIn: []string{"CUSTOM_B", "CUSTOM_A", "NOPE", "CUSTOM_A"}}); got != "CUSTOM_A,CUSTOM_B" {
		t.Errorf("in: %s", got)
	}
	if got := list(store.TraitFilter{NameIn: []string{}}); got != "" {
		t.Errorf("empty in: %s", got)
	}

	// Provider traits: generation checked, unknown traits refused, the
	// generation moves only when the set changes.
	_, _, err := s.SetProviderTraits(ctx, rpA, 1, []string{"CUSTOM_A"})
	mustKind(t, err, store.ErrConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
	_, _, err = s.SetProviderTraits(ctx, rpA, 0, []string{"CUSTOM_Q", "CUSTOM_A", "CUSTOM_P"})
	mustKind(t, err, store.ErrInvalid, "No such trait CUSTOM_P, CUSTOM_Q")
	_, _, err = s.SetProviderTraits(ctx, "nope", 0, nil)
	mustKind(t, err, store.ErrNotFound, "No resource provider with uuid nope found")
	p, ts, err := s.SetProviderTraits(ctx, rpA, 0, []string{"CUSTOM_B", "HW_CPU_X86_SSE", "CUSTOM_A"})
	if err != nil || p.Generation != 1 || traitNamesOf(ts) != "CUSTOM_A,CUSTOM_B,HW_CPU_X86_SSE" {
		t.Fatalf("set: %+v %v %v", p, traitNamesOf(ts), err)
	}
	if p, _, err = s.SetProviderTraits(ctx, rpA, 1, []string{"CUSTOM_A", "CUSTOM_B", "HW_CPU_X86_SSE"}); err != nil || p.Generation != 1 {
		t.Fatalf("same set: %+v %v", p, err)
	}
	if p, _, err = s.SetProviderTraits(ctx, rpB, 0, []string{"CUSTOM_A"}); err != nil || p.Generation != 1 {
		t.Fatalf("set B: %+v %v", p, err)
	}
	if got := list(store.TraitFilter{NamePrefix: "CUSTOM", Associated: new(true)}); got != "CUSTOM_B,CUSTOM_A" {
		t.Errorf("associated: %s", got)
	}
	if got := list(store.TraitFilter{NamePrefix: "CUSTOM", Associated: new(false)}); got != "CUSTOM_AB" {
		t.Errorf("not associated: %s", got)
	}

	mustKind(t, s.DeleteTrait(ctx, "CUSTOM_A"), store.ErrTraitInUse, "The trait CUSTOM_A is in use by a resource provider.")
	mustKind(t, s.DeleteTrait(ctx, "HW_CPU_X86_SSE"), store.ErrStandard, "Cannot delete standard trait HW_CPU_X86_SSE.")
	mustKind(t, s.DeleteTrait(ctx, "CUSTOM_NOPE"), store.ErrNotFound, "No such trait(s): CUSTOM_NOPE.")
	if err := s.DeleteTrait(ctx, "CUSTOM_AB"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetTrait(ctx, "CUSTOM_AB")
	mustKind(t, err, store.ErrNotFound, "No such trait(s): CUSTOM_AB.")
	var missing []string
	err = s.read(func(st *state) error {
		missing = missingTraits(st, []string{"CUSTOM_AB", "CUSTOM_A", "X", "CUSTOM_AB"})
		return nil
	})
	if err != nil || strings.Join(missing, ",") != "CUSTOM_AB,X" {
		t.Errorf("missing: %v %v", missing, err)
	}

	// Deleting all traits bumps the generation once.
	if err := s.DeleteProviderTraits(ctx, rpB); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProviderTraits(ctx, rpB); err != nil {
		t.Fatal(err)
	}
	mustKind(t, s.DeleteProviderTraits(ctx, "nope"), store.ErrNotFound, "No resource provider with uuid nope found")
	pb, tb, err := s.ProviderTraits(ctx, rpB)
	if err != nil || pb.Generation != 2 || len(tb) != 0 {
		t.Fatalf("B after delete: %+v %v %v", pb, tb, err)
	}
	checkLinks(t, s)

	// Everything survives close and reopen, including the id order.
	pa, ta, err := s.ProviderTraits(ctx, rpA)
	if err != nil || traitNamesOf(ta) != "HW_CPU_X86_SSE,CUSTOM_B,CUSTOM_A" {
		t.Fatalf("A: %v %v", traitNamesOf(ta), err)
	}
	all, _ := s.ListTraits(ctx, store.TraitFilter{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, db)
	defer s2.Close()
	pa2, ta2, err := s2.ProviderTraits(ctx, rpA)
	if err != nil || !reflect.DeepEqual(pa, pa2) || !reflect.DeepEqual(ta, ta2) {
		t.Errorf("after reopen: %+v %+v vs %+v %+v (%v)", pa, ta, pa2, ta2, err)
	}
	all2, _ := s2.ListTraits(ctx, store.TraitFilter{})
	if !reflect.DeepEqual(all, all2) {
		t.Errorf("trait list differs after reopen")
	}
	pb2, tb2, _ := s2.ProviderTraits(ctx, rpB)
	if pb2.Generation != 2 || len(tb2) != 0 {
		t.Errorf("B after reopen: %+v %v", pb2, tb2)
	}
	checkLinks(t, s2)
}

func TestAggregatesStore(t *testing.T) {
	ctx := context.Background()
	s, db := newTAStore(t)
	gen := func(g int64) *int64 { return &g }

	// Without a generation: no check, no increment.
	p, aggs, err := s.SetProviderAggregates(ctx, rpA, nil, []string{aggY, aggX, aggY})
	if err != nil || p.Generation != 0 || strings.Join(aggs, ",") != aggY+","+aggX {
		t.Fatalf("set without generation: %+v %v %v", p, aggs, err)
	}
	// With one: checked and always incremented.
	_, _, err = s.SetProviderAggregates(ctx, rpA, gen(3), []string{aggZ})
	mustKind(t, err, store.ErrConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
	_, _, err = s.SetProviderAggregates(ctx, "nope", nil, nil)
	mustKind(t, err, store.ErrNotFound, "No resource provider with uuid nope found")
	if p, _, err = s.SetProviderAggregates(ctx, rpA, gen(0), []string{aggX, aggY}); err != nil || p.Generation != 1 {
		t.Fatalf("same set with generation: %+v %v", p, err)
	}
	if p, aggs, err = s.SetProviderAggregates(ctx, rpB, gen(0), []string{aggZ, aggX}); err != nil || p.Generation != 1 || strings.Join(aggs, ",") != aggX+","+aggZ {
		t.Fatalf("set B: %+v %v %v", p, aggs, err)
	}
	if p, aggs, err = s.SetProviderAggregates(ctx, rpA, gen(1), []string{aggY}); err != nil || p.Generation != 2 || strings.Join(aggs, ",") != aggY {
		t.Fatalf("shrink A: %+v %v %v", p, aggs, err)
	}
	checkLinks(t, s)
	members := func(st *Ledger, a string) []string {
		var out []string
		_ = st.read(func(s *state) error {
			for p := range s.aggregates[a].members {
				out = append(out, p.uuid)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	if m := members(s, aggX); !reflect.DeepEqual(m, []string{rpB}) {
		t.Errorf("members of X: %v", m)
	}

	pa, aa, _ := s.ProviderAggregates(ctx, rpA)
	pb, ab, _ := s.ProviderAggregates(ctx, rpB)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, db)
	defer s2.Close()
	pa2, aa2, err := s2.ProviderAggregates(ctx, rpA)
	pb2, ab2, err2 := s2.ProviderAggregates(ctx, rpB)
	if err != nil || err2 != nil || !reflect.DeepEqual(pa, pa2) || !reflect.DeepEqual(aa, aa2) || !reflect.DeepEqual(pb, pb2) || !reflect.DeepEqual(ab, ab2) {
		t.Errorf("after reopen: %+v %v %+v %v / %+v %v %+v %v", pa, aa, pb, ab, pa2, aa2, pb2, ab2)
	}
	if m := members(s2, aggY); !reflect.DeepEqual(m, []string{rpA}) {
		t.Errorf("members of Y after reopen: %v", m)
	}
	checkLinks(t, s2)
	// Reusing an aggregate after reopen must not create a second row.
	if _, aggs, err := s2.SetProviderAggregates(ctx, rpA, nil, []string{aggZ, aggY}); err != nil || strings.Join(aggs, ",") != aggY+","+aggZ {
		t.Fatalf("reuse after reopen: %v %v", aggs, err)
	}
	recs, err := s2.be.Load(ctx)
	if n := len(recs.Aggregates); err != nil || n != 3 {
		t.Errorf("aggregate rows: %d %v", n, err)
	}
}

// TestConcurrentGenerationWriters races writers on one generation: exactly
// one wins each round and readers never see a half-applied write.
func TestConcurrentGenerationWriters(t *testing.T) {
	ctx := context.Background()
	s, _ := newTAStore(t)
	for _, n := range []string{"CUSTOM_R0", "CUSTOM_R1", "CUSTOM_R2", "CUSTOM_R3", "CUSTOM_R4"} {
		if _, _, err := s.EnsureTrait(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	const writers = 8
	for round := int64(0); round < 5; round++ {
		results := make(chan error, writers)
		for w := 0; w < writers; w++ {
			go func(w int) {
				var err error
				if w%2 == 0 {
					g := round
					_, _, err = s.SetProviderAggregates(ctx, rpA, &g, []string{aggX})
				} else {
					// A different set each round, so a win always changes it.
					want := []string{"CUSTOM_R" + string(rune('0'+round))}
					_, _, err = s.SetProviderTraits(ctx, rpA, round, want)
				}
				results <- err
			}(w)
			go func() { _, _, _ = s.ProviderTraits(ctx, rpA); _, _, _ = s.ProviderAggregates(ctx, rpA) }()
		}
		wins := 0
		for w := 0; w < writers; w++ {
			err := <-results
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConcurrentUpdate):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d writers won", round, wins)
		}
	}
	p, _ := s.GetProvider(ctx, rpA)
	if p.Generation != 5 {
		t.Errorf("generation %d", p.Generation)
	}
	checkLinks(t, s)
}
