package candidates

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
)

// TestFlatMatchesSearch checks the flat path (flat.go) against the
// ordinary search on the property test's random worlds: requests of one
// unsuffixed group with resources only, streamed (where the flat path
// serves lone roots) and found (where the search serves every root), give
// the same candidates, allocations in the same order, and the same
// summaries. It also checks that lone roots did produce candidates, so
// that the flat path was exercised.
func TestFlatMatchesSearch(t *testing.T) {
	flatCands := 0
	for seed := uint64(1); seed <= 1000; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		for q := range 4 {
			g := genGroup(r, "", ws, false)
			req := Request{Groups: []Group{{Resources: g.Resources}}, Limit: []int{0, 1, 3}[q%3]}
			desc := fmt.Sprintf("seed %d req %d %v limit %d", seed, q, req.Groups[0].Resources, req.Limit)
			want, err := Find(snap, req, Options{NestedAware: true})
			if err != nil || len(req.Groups[0].Resources) == 0 {
				continue
			}
			qy, err := Prepare(snap, req, Options{NestedAware: true})
			if err != nil {
				t.Fatalf("%s: Prepare: %v", desc, err)
			}
			if qy.e != nil && qy.e.flatGroup() != nil {
				t.Fatalf("%s: the flat path is on before streaming", desc)
			}
			var got []string
			sums := qy.Stream(func(c *Candidate) bool {
				got = append(got, engineKey(*c, req.Groups))
				if p := &snap.Providers[c.Allocs[0].Provider]; len(p.Tree) == 1 && len(p.SharedTo) == 0 && !p.Sharing {
					flatCands++
				}
				return true
			})
			sameAsFound(t, desc, req, got, sums, want)
		}
	}
	if flatCands < 100 {
		t.Errorf("only %d candidates from lone roots: the flat path was hardly exercised", flatCands)
	}
}
