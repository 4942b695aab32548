package candidates

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestCapKeepsGenerationPrefix checks a cap on random worlds against the
// uncapped answer: a cap of k keeps min(k, all) distinct candidates of
// the uncapped set (fewer before 1.29), a larger cap keeps them and more (generation is one
// order, cut at the cap), and the streamed answer equals the found one.
// TestCandidateCap15 (placementsrv) pins which ones against 15.0.0.
func TestCapKeepsGenerationPrefix(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 150; seed++ {
		r := rand.New(rand.NewPCG(seed, 15))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		for q := range 3 {
			req := genRequest(r, ws)
			req.Limit = 0
			for _, opt := range []Options{{NestedAware: true}, {NestedAware: true, Order: BreadthFirst},
				{NestedAware: true, WideTrees: true}, {NestedAware: true, Order: BreadthFirst, WideTrees: true}, {}} {
				desc := fmt.Sprintf("seed %d req %d %+v: %+v", seed, q, opt, req)
				if q, err := Prepare(snap, req, opt); err != nil || q.e != nil && q.e.infl != nil {
					// Folded amounts depend on where generation stops.
					continue
				}
				all := capKeys(t, snap, req, opt)
				var prev []string
				for _, k := range []int{1, 2, 3, 5, 8} {
					opt.MaxCandidates = k
					got := capKeys(t, snap, req, opt)
					// Before 1.29 Placement drops the nested candidates after
					// the cap counted them, so fewer may be left.
					n := min(k, len(all))
					if len(got) != n && (opt.NestedAware || len(got) > n) || !isSubset(got, all) || !isSubset(prev, got) {
						t.Fatalf("%s cap %d: %d %v\nall %d %v\nprevious cap %v", desc, k, len(got), got, len(all), all, prev)
					}
					if k < len(all) {
						checked++
					}
					if opt.Order == DepthFirst && !opt.Randomize {
						if s := streamKeys(t, snap, req, opt); !slices.Equal(s, got) {
							t.Fatalf("%s cap %d: streamed %v, found %v", desc, k, s, got)
						}
					}
					prev = got
				}
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d cuts checked", checked)
	}
}

func capKeys(t *testing.T, s *readmodel.Snapshot, req Request, opt Options) []string {
	t.Helper()
	res, err := Find(s, req, opt)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(res.Candidates))
	for _, c := range res.Candidates {
		out = append(out, engineKey(c, req.Groups))
	}
	slices.Sort(out)
	return out
}

func streamKeys(t *testing.T, s *readmodel.Snapshot, req Request, opt Options) []string {
	t.Helper()
	q, err := Prepare(s, req, opt)
	if err != nil {
		return nil
	}
	var out []string
	q.Stream(func(c *Candidate) bool {
		out = append(out, engineKey(*c, req.Groups))
		return true
	})
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// TestBreadthFirstCountsFilteredProducts: breadth-first takes product k
// of every root before product k+1 of any, counting the products its
// filters drop. Root a's first product puts both groups on a1, which has
// one unit; root b's first fits. With a cap of one, b's candidate is
// kept whichever root comes first. With WideTrees Placement counts only
// products within capacity, so a's second product becomes its first.
func TestBreadthFirstCountsFilteredProducts(t *testing.T) {
	b := readmodel.NewSnapshotBuilder(2, 5)
	inv := func(total int64) readmodel.ProviderState {
		return readmodel.ProviderState{Inventories: []readmodel.SnapInventory{{Class: b.Class("CUSTOM_DEV"), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}}}
	}
	b.AddProvider(readmodel.SnapProvider{UUID: "a", ID: 1}, readmodel.ProviderState{})
	b.AddProvider(readmodel.SnapProvider{UUID: "a1", ID: 2}, inv(1))
	b.AddProvider(readmodel.SnapProvider{UUID: "a2", ID: 3}, inv(1))
	b.AddProvider(readmodel.SnapProvider{UUID: "b", ID: 4}, readmodel.ProviderState{})
	b.AddProvider(readmodel.SnapProvider{UUID: "b1", ID: 5}, inv(2))
	parents := []int32{-1, 0, 0, -1, 3}
	s := b.Finish(func(i int) int32 { return parents[i] })
	dev := []Resource{{"CUSTOM_DEV", 1}}
	req := Request{Groups: []Group{{Suffix: "1", Resources: dev}, {Suffix: "2", Resources: dev}}, GroupPolicy: PolicyNone}
	res, err := Find(s, req, Options{NestedAware: true, Order: BreadthFirst, MaxCandidates: 1})
	if err != nil || len(res.Candidates) != 1 || s.Providers[res.Candidates[0].Allocs[0].Provider].UUID != "b1" {
		t.Fatalf("cap 1: %+v %v, want b1's candidate", res.Candidates, err)
	}
	// With WideTrees both roots' first counted products tie, and the
	// root Placement lists first wins: here a, as CPython 3.11 iterates
	// the set of pairs {(2, 1), (3, 1), (5, 4)} as (3, 1), (5, 4), (2, 1).
	res, err = Find(s, req, Options{NestedAware: true, Order: BreadthFirst, MaxCandidates: 1, WideTrees: true})
	if err != nil || len(res.Candidates) != 1 || s.Providers[s.Providers[res.Candidates[0].Allocs[0].Provider].Root].UUID != "a" {
		t.Fatalf("cap 1, wide: %+v %v, want a's candidate", res.Candidates, err)
	}
	res, err = Find(s, req, Options{NestedAware: true, Order: BreadthFirst, MaxCandidates: 2, WideTrees: true})
	if err != nil || len(res.Candidates) != 2 {
		t.Fatalf("cap 2, wide: %+v %v", res.Candidates, err)
	}
	roots := map[string]bool{}
	for _, c := range res.Candidates {
		roots[s.Providers[s.Providers[c.Allocs[0].Provider].Root].UUID] = true
	}
	if !roots["a"] || !roots["b"] {
		t.Errorf("cap 2, wide: candidates of %v, want one of each root", roots)
	}
	res, err = Find(s, req, Options{NestedAware: true, Order: BreadthFirst, MaxCandidates: 2})
	if err != nil || len(res.Candidates) != 2 || s.Providers[res.Candidates[0].Allocs[0].Provider].UUID != "b1" {
		t.Fatalf("cap 2: %+v %v, want b1's first", res.Candidates, err)
	}
}
