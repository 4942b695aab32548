package candidates

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestRareClassAnchors checks the anchors a rare class confines
// (narrowAnchors) against the oracle: the property test's random worlds,
// among many plain compute nodes that have every class but CUSTOM_A, so
// that CUSTOM_A is rare, asked for by the random requests (in trees, on
// sharing providers, in granular groups or not).
func TestRareClassAnchors(t *testing.T) {
	confined := 0
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		var ws []randworld.Prov
		pad := func(n int) {
			for range n {
				w := randworld.Prov{UUID: fmt.Sprintf("plain-%d", len(ws))}
				for c := range int32(3) {
					w.Invs = append(w.Invs, randworld.NewInv(r, c))
				}
				ws = append(ws, w)
			}
		}
		pad(100)
		ws = append(ws, randworld.NewWorld(r)...)
		pad(100)
		snap := randworld.Build(ws)
		custom := snap.ClassByName["CUSTOM_A"]
		for q := range 4 {
			req := genRequest(r, ws)
			nested := r.IntN(4) != 0
			wantKeys, wantSums, dependent, wantErr := oracleFind(snap, req, nested)
			res, err := Find(snap, req, Options{NestedAware: nested})
			desc := fmt.Sprintf("seed %d req %d nested %v: %+v", seed, q, nested, req)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%s: error %v, oracle %v", desc, err, wantErr)
			}
			if err != nil || dependent {
				continue
			}
			got := map[string]bool{}
			for _, c := range res.Candidates {
				got[engineKey(c, req.Groups)] = true
			}
			if g, w := sortedKeys(got), sortedKeys(wantKeys); fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("%s:\n engine %d %v\n oracle %d %v", desc, len(g), g, len(w), w)
			}
			gotSums := map[int32]bool{}
			for _, p := range res.Summaries {
				gotSums[p] = true
			}
			if fmt.Sprint(gotSums) != fmt.Sprint(wantSums) {
				t.Fatalf("%s: summaries %v, oracle %v", desc, gotSums, wantSums)
			}
			if len(got) > 0 && asksFor(req, snap, custom) && len(snap.ByClass[custom]) <= len(snap.Providers)/rareClassShare {
				confined++
			}
		}
	}
	if confined < 50 {
		t.Errorf("only %d answers with candidates went through the confinement by a rare class", confined)
	}
}

func asksFor(req Request, s *readmodel.Snapshot, class int32) bool {
	for _, g := range req.Groups {
		for _, r := range g.Resources {
			if s.ClassByName[r.Class] == class {
				return true
			}
		}
	}
	return false
}
