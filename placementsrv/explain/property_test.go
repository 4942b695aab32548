package explain

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestExplainAgreesWithAnswer checks Explain against Find on random
// worlds: the counts it reports are the answer's, an empty answer names
// the stage that removed the last roots and constraints whose removal
// yields candidates (Find confirms it), and a non-empty one leaves roots
// at every stage and lists no root of the answer as a miss.
func TestExplainAgreesWithAnswer(t *testing.T) {
	empty, blocked, multi := 0, 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 31))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		req := genRequest(r, ws)
		if r.IntN(3) == 0 {
			req.Limit = 1 + r.IntN(3)
		}
		opt := candidates.Options{NestedAware: r.IntN(4) != 0, MaxCandidates: r.IntN(2) * (1 + r.IntN(4))}
		real, ferr := candidates.Find(snap, cloneRequest(req), opt)
		ex, err := Explain(snap, cloneRequest(req), opt, Options{Misses: 3})
		var nf *candidates.NotFoundError
		if errors.As(ferr, &nf) {
			if !errors.As(err, &nf) {
				t.Fatalf("seed %d: Find: %v, Explain: %v", seed, ferr, err)
			}
			continue
		}
		if ferr != nil || err != nil {
			t.Fatalf("seed %d: Find: %v, Explain: %v", seed, ferr, err)
		}
		if ex.Returned != len(real.Candidates) {
			t.Fatalf("seed %d: returned %d, answer has %d", seed, ex.Returned, len(real.Candidates))
		}
		if ex.Roots != len(snap.Roots) || ex.Stages[0].Left != len(snap.Roots) {
			t.Fatalf("seed %d: roots %d, stage 0 %+v, snapshot %d", seed, ex.Roots, ex.Stages[0], len(snap.Roots))
		}
		if len(real.Candidates) > 0 {
			checkNonEmpty(t, seed, snap, real, ex)
			continue
		}
		empty++
		if checkEmpty(t, seed, snap, req, opt, ex) {
			blocked++
			if len(ex.Blockers) == 1 && len(ex.Blockers[0].Constraints) > 1 {
				multi++
			}
		}
	}
	t.Logf("%d empty answers, %d with blockers (%d needing several constraints removed)", empty, blocked, multi)
	if empty < 50 || blocked < empty/2 {
		t.Fatalf("too few cases exercised: %d empty, %d with blockers", empty, blocked)
	}
}

func checkNonEmpty(t *testing.T, seed uint64, snap *readmodel.Snapshot, real candidates.Result, ex *Explanation) {
	t.Helper()
	if ex.Emptied != "" || len(ex.Blockers) > 0 {
		t.Fatalf("seed %d: answer has candidates, explanation says emptied at %q, blockers %v", seed, ex.Emptied, ex.Blockers)
	}
	if last := ex.Stages[len(ex.Stages)-1]; last.Left == 0 {
		t.Fatalf("seed %d: answer has candidates, last stage %+v", seed, last)
	}
	if ex.Generated < ex.Returned {
		t.Fatalf("seed %d: generated %d < returned %d", seed, ex.Generated, ex.Returned)
	}
	// A root whose tree gives a candidate a non-sharing provider has
	// candidates; only sharing providers can serve another root's.
	answer := map[string]bool{}
	for _, c := range real.Candidates {
		for _, a := range c.Allocs {
			if p := &snap.Providers[a.Provider]; !p.Sharing {
				answer[snap.Providers[p.Root].UUID] = true
			}
		}
	}
	for _, m := range ex.Misses {
		if answer[m.UUID] {
			t.Fatalf("seed %d: %s has candidates and is listed as a miss: %v", seed, m.UUID, m.Reasons)
		}
		if len(m.Reasons) == 0 {
			t.Fatalf("seed %d: miss %s without a reason", seed, m.UUID)
		}
	}
}

// checkEmpty checks an empty answer's explanation; true when it named
// blockers.
func checkEmpty(t *testing.T, seed uint64, snap *readmodel.Snapshot, req candidates.Request, opt candidates.Options, ex *Explanation) bool {
	t.Helper()
	if ex.Emptied == "" {
		t.Fatalf("seed %d: empty answer, no stage emptied: %+v", seed, ex.Stages)
	}
	opt.MaxCandidates = 0
	if len(ex.Blockers) == 0 {
		// Nothing helps: then no requested amount fits by itself.
		for _, g := range req.Groups {
			for _, r := range g.Resources {
				one := candidates.Request{Groups: []candidates.Group{{Suffix: g.Suffix, Resources: []candidates.Resource{r}}}}
				if res, err := candidates.Find(snap, one, opt); err == nil && len(res.Candidates) > 0 {
					t.Fatalf("seed %d: no blockers named, yet %s%s=%s:%d alone has %d candidates", seed, "resources", g.Suffix, r.Class, r.Amount, len(res.Candidates))
				}
			}
		}
		return false
	}
	before := constraintTexts(req)
	for _, b := range ex.Blockers {
		relaxed := without(req, b.Constraints)
		res, err := candidates.Find(snap, relaxed, opt)
		if err != nil || len(res.Candidates) == 0 {
			t.Fatalf("seed %d: removing %v yields %d candidates (err %v)", seed, b.Constraints, len(res.Candidates), err)
		}
		after := constraintTexts(relaxed)
		for _, c := range b.Constraints {
			if countOf(before, c.Text)-countOf(after, c.Text) < 1 {
				t.Fatalf("seed %d: blocker %q still in the relaxed request", seed, c.Text)
			}
		}
		// Whatever else went is a group the removal emptied.
		for _, c := range constraints(&req, candidates.PrefilterAdded{}) {
			if !slices.Contains(after, c.Text) && !slices.ContainsFunc(b.Constraints, func(x Constraint) bool { return x.Text == c.Text }) &&
				slices.ContainsFunc(relaxed.Groups, func(g candidates.Group) bool { return g.Suffix == c.Group && c.Group != "" }) {
				t.Fatalf("seed %d: removing %v also removed %q", seed, b.Constraints, c.Text)
			}
		}
	}
	return true
}

func constraintTexts(req candidates.Request) []string {
	var out []string
	for _, c := range constraints(&req, candidates.PrefilterAdded{}) {
		out = append(out, c.Text)
	}
	return out
}

func countOf(xs []string, s string) int {
	n := 0
	for _, x := range xs {
		if x == s {
			n++
		}
	}
	return n
}

// genRequest draws a request (randworld's) in candidates' terms.
func genRequest(r *rand.Rand, ws []randworld.Prov) candidates.Request {
	q := randworld.NewRequest(r, ws)
	req := candidates.Request{GroupPolicy: q.GroupPolicy, RootRequired: q.RootRequired, RootForbidden: q.RootForbidden, SameSubtree: q.SameSubtree}
	for _, g := range q.Groups {
		cg := candidates.Group{Suffix: g.Suffix, Required: g.Required, Forbidden: g.Forbidden, MemberOf: g.MemberOf, ForbiddenAggs: g.ForbiddenAggs, InTree: g.InTree}
		for _, res := range g.Resources {
			cg.Resources = append(cg.Resources, candidates.Resource{Class: res.Class, Amount: res.Amount})
		}
		req.Groups = append(req.Groups, cg)
	}
	return req
}
