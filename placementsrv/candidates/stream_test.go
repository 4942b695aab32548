package candidates

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
)

// TestStreamMatchesFind checks, on the property test's random worlds,
// that a streamed answer is exactly Find's: the same candidates in the
// same order and the same summaries, with and without a limit.
func TestStreamMatchesFind(t *testing.T) {
	const cases = 300
	streamed := 0
	for seed := uint64(1); seed <= cases; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		for q := 0; q < 4; q++ {
			req := genRequest(r, ws)
			nested := r.IntN(4) != 0
			for _, limit := range []int{0, 1, 3} {
				req.Limit = limit
				opt := Options{NestedAware: nested, MaxCandidates: r.IntN(3) * 5}
				desc := fmt.Sprintf("seed %d req %d nested %v limit %d max %d", seed, q, nested, limit, opt.MaxCandidates)
				want, err := Find(snap, req, opt)
				if err != nil {
					break
				}
				qy, err := Prepare(snap, req, opt)
				if err != nil {
					t.Fatalf("%s: Prepare: %v", desc, err)
				}
				if !qy.Streamable() {
					continue
				}
				var got []string
				sums := qy.Stream(func(c *Candidate) bool {
					got = append(got, engineKey(*c, req.Groups))
					return true
				})
				sameAsFound(t, desc, req, got, sums, want)
				if len(got) > 0 {
					streamed++
				}
			}
		}
	}
	if streamed < cases/2 {
		t.Errorf("only %d non-empty streamed answers", streamed)
	}
}

// sameAsFound fails the test unless a streamed answer (the engineKeys of
// its candidates, its summaries) is exactly Find's.
func sameAsFound(t *testing.T, desc string, req Request, got []string, sums []int32, want Result) {
	t.Helper()
	var wantKeys []string
	for _, c := range want.Candidates {
		wantKeys = append(wantKeys, engineKey(c, req.Groups))
	}
	if !slices.Equal(got, wantKeys) {
		t.Fatalf("%s: streamed\n %v\nfound\n %v", desc, got, wantKeys)
	}
	if !slices.Equal(sums, want.Summaries) {
		t.Fatalf("%s: streamed summaries %v, found %v", desc, sums, want.Summaries)
	}
}

// TestStreamStops checks that a sink returning false ends generation.
func TestStreamStops(t *testing.T) {
	snap := wideWorld(4)
	q, err := Prepare(snap, wideRequest(4, 0), Options{NestedAware: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sums := q.Stream(func(*Candidate) bool { n++; return n < 3 })
	if n != 3 || len(sums) != 5 {
		t.Fatalf("%d candidates, summaries %v", n, sums)
	}
}

// TestAnchorMatchesStream checks, on the property test's random worlds,
// that Anchor gives each root the candidates a stream gives under it, in
// the same order, those with a provider of the root's own tree that is
// not sharing (the others Placement may list under another anchor), and
// that it may be called again.
func TestAnchorMatchesStream(t *testing.T) {
	const cases = 200
	compared := 0
	for seed := uint64(1); seed <= cases; seed++ {
		r := rand.New(rand.NewPCG(seed, 43))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		for q := 0; q < 4; q++ {
			req := genRequest(r, ws)
			qs, err := Prepare(snap, req, Options{NestedAware: true})
			if err != nil || !qs.Streamable() || qs.Folds() {
				continue
			}
			hostOf := func(c *Candidate) int32 {
				for _, a := range c.Allocs {
					if p := &snap.Providers[a.Provider]; !p.Sharing {
						return p.Root
					}
				}
				return -1
			}
			want := map[int32][]string{}
			qs.Stream(func(c *Candidate) bool {
				if h := hostOf(c); h >= 0 {
					want[h] = append(want[h], engineKey(*c, req.Groups))
				}
				return true
			})
			qa, _ := Prepare(snap, req, Options{NestedAware: true})
			for pass := 0; pass < 2; pass++ {
				for _, root := range snap.Roots {
					var got []string
					qa.Anchor(root, func(c *Candidate) bool {
						if hostOf(c) == root {
							got = append(got, engineKey(*c, req.Groups))
						}
						return true
					})
					if !slices.Equal(got, want[root]) {
						t.Fatalf("seed %d req %d root %d pass %d: anchor\n %v\nstream\n %v", seed, q, root, pass, got, want[root])
					}
					compared += len(got)
				}
			}
		}
	}
	if compared < cases {
		t.Errorf("only %d candidates compared", compared)
	}
}
