package count_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// oracle follows the definition literally, in memory: roots in ascending
// order; for each, the whole request is answered (candidates.Find on the
// snapshot as claims left it) and the first candidate whose non-sharing
// providers are in the root's tree is claimed, by patching the snapshot,
// until there is none. A held-back root is also counted alone with its
// held-back inventories released, from the snapshot as its turn found it.
func oracle(t *testing.T, snap *readmodel.Snapshot, req flavorreq.Request) (counts, held map[string]int64) {
	t.Helper()
	raw := req.Query(0)
	creq, herr := candidates.ParseQuery(raw, query.Values(raw), microversion.SameSubtree)
	if herr != nil {
		return nil, nil
	}
	counts, held = map[string]int64{}, map[string]int64{}
	for _, r := range snap.Roots {
		uuid := snap.Providers[r].UUID
		if released := releasedOf(snap, r); released != nil {
			_, n := claimAll(t, released, creq, r)
			held[uuid] = n
		}
		var n int64
		snap, n = claimAll(t, snap, creq, r)
		counts[uuid] = n
		if _, ok := held[uuid]; ok {
			held[uuid] = max(held[uuid]-n, 0)
		}
	}
	return counts, held
}

// claimAll claims root r's first candidates one by one.
func claimAll(t *testing.T, snap *readmodel.Snapshot, creq candidates.Request, r int32) (*readmodel.Snapshot, int64) {
	var n int64
	for {
		res, err := candidates.Find(snap, creq, candidates.Options{NestedAware: true})
		if err != nil {
			return snap, 0
		}
		i := slices.IndexFunc(res.Candidates, func(c candidates.Candidate) bool { return hostOf(snap, c.Allocs) == r })
		if i < 0 {
			return snap, n
		}
		snap = patched(t, snap, res.Candidates[i].Allocs, func(inv *readmodel.SnapInventory, a int64) { inv.Used += a })
		n++
	}
}

// hostOf is the root of a candidate's non-sharing providers, -1 when it
// has none.
func hostOf(snap *readmodel.Snapshot, allocs []candidates.Alloc) int32 {
	for _, a := range allocs {
		if p := &snap.Providers[a.Provider]; !p.Sharing {
			return p.Root
		}
	}
	return -1
}

// releasedOf is snap with root r's held-back inventories released, nil
// when it has none.
func releasedOf(snap *readmodel.Snapshot, r int32) *readmodel.Snapshot {
	var patches []readmodel.UsagePatch
	for _, p := range snap.Providers[r].Tree {
		invs := slices.Clone(snap.Inventories(p))
		changed := false
		for k := range invs {
			if invs[k].Total > 0 && invs[k].Reserved == invs[k].Total {
				invs[k].Reserved = 0
				invs[k].Capacity = int64(float64(invs[k].Total) * invs[k].AllocationRatio)
				changed = true
			}
		}
		if changed {
			patches = append(patches, readmodel.UsagePatch{Provider: p, Inventories: invs})
		}
	}
	if patches == nil {
		return nil
	}
	return snap.Patched(snap.Version, patches)
}

func patched(t *testing.T, snap *readmodel.Snapshot, allocs []candidates.Alloc, apply func(*readmodel.SnapInventory, int64)) *readmodel.Snapshot {
	t.Helper()
	byProv := map[int32][]readmodel.SnapInventory{}
	for _, a := range allocs {
		invs, ok := byProv[a.Provider]
		if !ok {
			invs = slices.Clone(snap.Inventories(a.Provider))
		}
		inv, _ := readmodel.InventoryOf(invs, a.Class)
		apply(inv, a.Amount)
		byProv[a.Provider] = invs
	}
	var patches []readmodel.UsagePatch
	for p, invs := range byProv {
		patches = append(patches, readmodel.UsagePatch{Provider: p, Inventories: invs})
	}
	ns := snap.Patched(snap.Version+1, patches)
	if ns == nil {
		t.Fatal("patch changed classes")
	}
	return ns
}

// memWorld is a randworld world with some inventories held back (reserved
// == total) and some roots disabled.
func memWorld(r *rand.Rand) ([]randworld.Prov, map[string]string) {
	ws := randworld.NewWorld(r)
	reasons := map[string]string{}
	for i := range ws {
		if ws[i].Parent == "" && r.IntN(5) == 0 {
			ws[i].Traits = append(ws[i].Traits, "COMPUTE_STATUS_DISABLED")
		}
		if len(ws[i].Invs) > 0 && r.IntN(6) == 0 {
			inv := &ws[i].Invs[r.IntN(len(ws[i].Invs))]
			inv.Reserved, inv.Capacity, inv.Used = inv.Total, 0, 0
			if r.IntN(2) == 0 {
				reasons[ws[i].UUID] = randworld.Pick(r, []string{"cleaning", "maintenance"})
			}
		}
	}
	// Intern the pre-filter's trait even where no root has it.
	ws = append(ws, randworld.Prov{UUID: "zz-traits", Traits: []string{"COMPUTE_STATUS_DISABLED", "MISC_SHARES_VIA_AGGREGATE"}, Aggs: []string{"agg-none"}})
	return ws, reasons
}

// memRequest draws a flavor's request over randworld's names.
func memRequest(r *rand.Rand) flavorreq.Request {
	req := flavorreq.Request{RootForbidden: []string{"COMPUTE_STATUS_DISABLED"}}
	group := func(suffix string) flavorreq.Group {
		g := flavorreq.Group{Suffix: suffix}
		for _, c := range randworld.Classes {
			if r.IntN(2) == 0 || c == "VCPU" && suffix == "" {
				g.Resources = append(g.Resources, flavorreq.Resource{Class: c, Amount: int64(1 + r.IntN(3))})
			}
		}
		if len(g.Resources) == 0 {
			g.Resources = append(g.Resources, flavorreq.Resource{Class: "DISK_GB", Amount: 1})
		}
		if r.IntN(4) == 0 {
			g.Required = []string{randworld.Pick(r, randworld.Traits[:4])}
		}
		if r.IntN(5) == 0 {
			g.Forbidden = []string{randworld.Pick(r, randworld.Traits[:4])}
		}
		if len(g.Required) > 0 && len(g.Forbidden) > 0 && g.Required[0] == g.Forbidden[0] {
			g.Forbidden = nil
		}
		return g
	}
	if r.IntN(4) != 0 {
		req.Groups = append(req.Groups, group(""))
	}
	granular := r.IntN(3)
	if len(req.Groups) == 0 {
		granular = max(granular, 1)
	}
	for i := 1; i <= granular; i++ {
		req.Groups = append(req.Groups, group(fmt.Sprint(i)))
	}
	if granular > 1 || granular == 1 && r.IntN(2) == 0 {
		req.GroupPolicy = randworld.Pick(r, []string{"none", "isolate"})
	}
	if r.IntN(6) == 0 {
		req.RootRequired = []string{randworld.Pick(r, randworld.Traits[:4])}
	}
	return req
}

// TestAgainstDefinition compares Count with the literal definition on
// random worlds and requests, in memory.
func TestAgainstDefinition(t *testing.T) {
	worlds, perWorld := 300, 6
	diffs, nonzero, engine := 0, 0, 0
	for seed := uint64(1); seed <= uint64(worlds); seed++ {
		r := rand.New(rand.NewPCG(seed, 41))
		ws, reasons := memWorld(r)
		snap := randworld.Build(ws)
		var flavors []flavorreq.Result
		for k := 0; k < perWorld; k++ {
			flavors = append(flavors, flavorreq.Result{Flavor: novaclient.Flavor{Name: fmt.Sprint("f", k)}, Request: memRequest(r)})
		}
		rep := count.Count(count.Input{Snapshot: snap, Flavors: flavors, HeldBack: reasons, DefaultZone: "nova"})
		for k, f := range rep.Flavors {
			wantCounts, wantHeld := oracle(t, snap, flavors[k].Request)
			if flavorsFold(flavors[k].Request) {
				continue
			}
			got, gotHeld := map[string]int64{}, map[string]int64{}
			for _, h := range f.Hosts {
				got[h.UUID], gotHeld[h.UUID] = h.Count, h.HeldBack
			}
			for _, rt := range snap.Roots {
				u := snap.Providers[rt].UUID
				if got[u] != wantCounts[u] || gotHeld[u] != wantHeld[u] {
					diffs++
					t.Errorf("seed %d flavor %d (%s) root %s: count %d held %d, definition %d held %d",
						seed, k, flavors[k].Request.Query(0), u, got[u], gotHeld[u], wantCounts[u], wantHeld[u])
				}
				if wantCounts[u] > 0 {
					nonzero++
				}
				if len(snap.Providers[rt].Tree) > 1 || len(snap.Providers[rt].SharedTo) > 0 {
					engine++
				}
			}
		}
	}
	t.Logf("%d worlds × %d flavors: %d differences (%d non-zero host counts, %d host counts of trees or sharing)", worlds, perWorld, diffs, nonzero, engine)
}

// flavorsFold reports a request Placement folds amounts of in place,
// which the count does not replay (it says so in a note).
func flavorsFold(req flavorreq.Request) bool {
	if req.GroupPolicy == "none" {
		return false
	}
	var un map[string]bool
	for _, g := range req.Groups {
		if g.Suffix == "" {
			un = map[string]bool{}
			for _, x := range g.Resources {
				un[x.Class] = true
			}
		}
	}
	for _, g := range req.Groups {
		for _, x := range g.Resources {
			if g.Suffix != "" && un[x.Class] {
				return true
			}
		}
	}
	return false
}

// TestCloudsAgainstDefinition compares Count with the literal definition
// on the clouds and flavors the API test uses, many more of them.
func TestCloudsAgainstDefinition(t *testing.T) {
	results := flavorreq.TranslateAll(testFlavors(), flavorreq.Options{})
	worlds, diffs, claims := 200, 0, int64(0)
	for seed := uint64(1); seed <= uint64(worlds); seed++ {
		c := newCloud(rand.New(rand.NewPCG(seed, 7)), 4+int(seed%4))
		snap := c.snapshot()
		rep := count.Count(count.Input{Snapshot: snap, Flavors: results, HeldBack: c.reasons(), DefaultZone: "nova"})
		for k, f := range rep.Flavors {
			if f.Err != "" {
				t.Fatalf("flavor %s: %s", f.Name, f.Err)
			}
			wantCounts, wantHeld := oracle(t, snap, results[k].Request)
			got, gotHeld := map[string]int64{}, map[string]int64{}
			for _, h := range f.Hosts {
				got[h.UUID], gotHeld[h.UUID] = h.Count, h.HeldBack
			}
			for _, rt := range snap.Roots {
				u := snap.Providers[rt].UUID
				claims += wantCounts[u] + wantHeld[u]
				if got[u] != wantCounts[u] || gotHeld[u] != wantHeld[u] {
					diffs++
					t.Errorf("seed %d flavor %s root %s: count %d held %d, definition %d held %d",
						seed, f.Name, snap.Providers[rt].Name, got[u], gotHeld[u], wantCounts[u], wantHeld[u])
				}
			}
		}
	}
	t.Logf("%d clouds × %d flavors: %d differences (%d claims)", worlds, len(results), diffs, claims)
}
