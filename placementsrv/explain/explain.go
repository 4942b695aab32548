// Package explain answers "why these candidates, why none" for an
// allocation candidates request: it reruns candidates' search on relaxed
// copies of the request, so the hot path carries no instrumentation, and
// every count it reports is the engine's own. It stands beside the
// engine and uses only its exported API (Prepare, Find, the Query's
// stream) and the read model.
package explain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Explanation is what Explain found for one request.
type Explanation struct {
	// Roots are the root providers of the snapshot.
	Roots int `json:"roots"`
	// Stages is the funnel over roots (trees): each stage keeps the roots
	// that the previous ones kept and that still have candidates with one
	// more constraint applied.
	Stages []Stage `json:"stages"`
	// Groups is the per-group funnel over providers.
	Groups []GroupFunnel `json:"groups"`
	// Emptied names the first stage that left no root, or "".
	Emptied string `json:"emptied,omitempty"`
	// Generated counts candidates without limit or cap; Returned counts
	// those the answer holds.
	Generated int `json:"generated"`
	Returned  int `json:"returned"`
	// Blockers are sets of constraints whose removal yields candidates;
	// only computed when the answer is empty.
	Blockers []Blocker `json:"blockers,omitempty"`
	// Misses are the roots without candidates that came closest.
	Misses []Miss `json:"nearest_misses,omitempty"`
	// Why sums the explanation up in a few sentences.
	Why []string `json:"why"`
}

// Stage is one step of a funnel.
type Stage struct {
	Name string `json:"name"`
	// Prefilter marks a constraint the OWNER_NOVA pre-filter added.
	Prefilter bool `json:"prefilter,omitempty"`
	Removed   int  `json:"removed"`
	Left      int  `json:"left"`
	// Unit is what the stage counts when not roots or providers.
	Unit string `json:"unit,omitempty"`
}

// GroupFunnel is one request group's funnel over providers: the
// providers with an inventory of a requested class (any provider for a
// resourceless group), filtered by each constraint in turn, then each
// class's capacity among what is left.
type GroupFunnel struct {
	Group     string       `json:"group"`
	Providers int          `json:"providers"`
	Stages    []Stage      `json:"stages"`
	Classes   []ClassCount `json:"classes,omitempty"`
}

// ClassCount splits the providers left after a group's trait and
// aggregate filters by how they meet one requested amount.
type ClassCount struct {
	Class  string `json:"class"`
	Amount int64  `json:"amount"`
	// With have an inventory of the class; of them, HeldBack are reserved
	// in full (reserved == total), NoFit lack capacity or break a unit
	// rule, and Fit can give the amount. Sharing counts the sharing
	// providers among Fit.
	With     int `json:"with"`
	HeldBack int `json:"held_back"`
	NoFit    int `json:"no_fit"`
	Fit      int `json:"fit"`
	Sharing  int `json:"sharing"`
}

// Blocker is a set of constraints that, removed together, let the query
// find candidates, at Roots roots.
type Blocker struct {
	Constraints []Constraint `json:"constraints"`
	Roots       int          `json:"roots"`
}

// Miss is a root without candidates and what kept it out.
type Miss struct {
	Root    string   `json:"root"`
	UUID    string   `json:"uuid"`
	Reasons []string `json:"reasons"`
}

// Options say how much to explain.
type Options struct {
	// Misses is how many nearest misses to list.
	Misses int
	// Prefiltered is what the OWNER_NOVA pre-filter added to the request.
	Prefiltered candidates.PrefilterAdded
}

// Explain explains req on s with the answer's options opt; req is the
// request as the answer sees it (pre-filter applied). An unknown class or
// trait is the *NotFoundError Prepare gives.
func Explain(s *readmodel.Snapshot, req candidates.Request, opt candidates.Options, eo Options) (*Explanation, error) {
	x := &explainer{s: s, req: req, opt: searchOptions(opt), answerOpt: opt, pre: eo.Prefiltered}
	real, err := candidates.Find(s, cloneRequest(req), withoutRand(opt))
	if err != nil {
		return nil, fmt.Errorf("explain: search the answer: %w", err)
	}
	ex := &Explanation{Roots: len(s.Roots), Returned: len(real.Candidates)}
	if err := x.rootFunnel(ex); err != nil {
		return nil, err
	}
	for i := range req.Groups {
		ex.Groups = append(ex.Groups, x.groupFunnel(i))
	}
	for _, st := range ex.Stages {
		if st.Left == 0 {
			ex.Emptied = st.Name
			break
		}
	}
	if ex.Returned == 0 {
		if ex.Blockers, err = x.blockers(); err != nil {
			return nil, err
		}
	}
	ex.Misses = x.misses(eo.Misses)
	ex.Why = verdict(ex)
	return ex, nil
}

// verdict sums ex up: the count, or where the last roots went, what to
// remove to get candidates, and the amounts nothing can give.
func verdict(ex *Explanation) []string {
	if ex.Returned > 0 {
		return []string{fmt.Sprintf("%s (%d generated)", plural(ex.Returned, "candidate"), ex.Generated)}
	}
	out := []string{"no candidates: the last roots went at stage \"" + ex.Emptied + "\""}
	for _, b := range ex.Blockers {
		var texts []string
		pre := false
		for _, c := range b.Constraints {
			texts = append(texts, c.Text)
			pre = pre || c.Prefilter
		}
		line := "removing " + strings.Join(texts, " and ")
		if pre {
			line += " (added by the OWNER_NOVA pre-filter)"
		}
		out = append(out, fmt.Sprintf("%s yields candidates at %s", line, plural(b.Roots, "root")))
	}
	for _, g := range ex.Groups {
		if n := len(g.Stages); n > 0 && g.Stages[n-1].Left == 0 {
			for _, st := range g.Stages {
				if st.Left == 0 {
					out = append(out, fmt.Sprintf("group %s: no provider passes %s", g.Group, st.Name))
					break
				}
			}
			continue
		}
		for _, c := range g.Classes {
			if c.Fit > 0 {
				continue
			}
			need := c.Class + ":" + itoa64(c.Amount)
			switch {
			case c.With == 0:
				out = append(out, fmt.Sprintf("group %s: no provider left by its filters has %s", g.Group, c.Class))
			case c.NoFit == 0:
				out = append(out, fmt.Sprintf("group %s: every provider of %s is held back (reserved == total): %d", g.Group, c.Class, c.HeldBack))
			default:
				out = append(out, fmt.Sprintf("group %s: no provider can give %s (%d held back, %d without room)", g.Group, need, c.HeldBack, c.NoFit))
			}
		}
	}
	return out
}

// explainer holds one Explain call's state.
type explainer struct {
	s   *readmodel.Snapshot
	req candidates.Request
	opt candidates.Options
	// answerOpt are the answer's own options (cap, randomization).
	answerOpt candidates.Options
	pre       candidates.PrefilterAdded
	// alone[g]: roots with candidates for group g by itself (root filters
	// applied); together, subtree and final: the later stages' roots.
	alone                   []rootSet
	together, subtree, full rootSet
}

// rootSet marks root provider indexes.
type rootSet map[int32]bool

// searchOptions are the answer's options for a pass that must see every
// candidate in generation order: no cap, no randomization, depth-first.
func searchOptions(opt candidates.Options) candidates.Options {
	return candidates.Options{NestedAware: opt.NestedAware, WideTrees: opt.WideTrees}
}

// withoutRand keeps the answer's options but its randomness source,
// which a diagnostic must not consume: the count does not depend on it.
func withoutRand(opt candidates.Options) candidates.Options {
	opt.Rand, opt.Owners = nil, nil
	return opt
}

// rootsOf returns the roots (anchors) at which req has candidates, and
// how many candidates there are.
func (x *explainer) rootsOf(req candidates.Request) (rootSet, int, error) {
	if !usable(req) {
		return rootSet{}, 0, nil
	}
	req.Limit = 0
	set := rootSet{}
	q, err := candidates.Prepare(x.s, req, x.opt)
	var nf *candidates.NotFoundError
	if errors.As(err, &nf) {
		// A relaxed request can reach a name the answer never did: a
		// group Placement stopped before. It has no candidates.
		return set, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("explain: prepare: %w", err)
	}
	if !q.Streamable() {
		res := q.Find()
		for _, c := range res.Candidates {
			set[anchorOf(x.s, &c)] = true
		}
		return set, len(res.Candidates), nil
	}
	n := 0
	q.Stream(func(c *candidates.Candidate) bool {
		set[anchorOf(x.s, c)] = true
		n++
		return true
	})
	return set, n, nil
}

// yields reports whether req has at least one candidate, and at how many
// roots when it has.
func (x *explainer) yields(req candidates.Request) (int, error) {
	set, _, err := x.rootsOf(req)
	return len(set), err
}

// usable reports whether a relaxed request is still a query.
func usable(req candidates.Request) bool { return len(req.Groups) > 0 }

// anchorOf is the root a candidate counts at: the tree of its first
// provider that is not a sharing one, else its first sharing provider's
// own root. It depends on the candidate alone, not on which anchor the
// search offered a sharing provider's candidate at, so that the stages,
// each a search of its own, count alike.
func anchorOf(s *readmodel.Snapshot, c *candidates.Candidate) int32 {
	for _, a := range c.Allocs {
		if p := &s.Providers[a.Provider]; !p.Sharing {
			return p.Root
		}
	}
	for _, m := range c.Mappings {
		for _, p := range m {
			if !s.Providers[p].Sharing {
				return s.Providers[p].Root
			}
		}
	}
	if len(c.Allocs) > 0 {
		return s.Providers[c.Allocs[0].Provider].Root
	}
	for _, m := range c.Mappings {
		if len(m) > 0 {
			return s.Providers[m[0]].Root
		}
	}
	return -1
}

// rootFunnel fills the stages over roots.
func (x *explainer) rootFunnel(ex *Explanation) error {
	left := rootSet{}
	for _, r := range x.s.Roots {
		left[r] = true
	}
	ex.Stages = append(ex.Stages, Stage{Name: "candidate roots", Left: len(left)})
	x.rootStages(ex, left)
	if err := x.groupStages(ex, left); err != nil {
		return err
	}
	var name []string
	if x.req.Limit > 0 {
		name = append(name, "limit="+strconv.Itoa(x.req.Limit))
	}
	if x.answerOpt.MaxCandidates > 0 {
		name = append(name, "max_allocation_candidates="+strconv.Itoa(x.answerOpt.MaxCandidates))
	}
	if len(name) > 0 {
		// Counted in candidates: a limit keeps some of a root's.
		ex.Stages = append(ex.Stages, Stage{Name: strings.Join(name, ", "), Unit: "candidates",
			Removed: ex.Generated - ex.Returned, Left: ex.Returned})
	}
	return nil
}

// rootStages applies root_required and its forbidden traits one by one.
func (x *explainer) rootStages(ex *Explanation, left rootSet) {
	for i, t := range x.req.RootRequired {
		id, ok := x.s.TraitByName[t]
		keep := x.rootsWhere(func(p *readmodel.SnapProvider) bool { return ok && p.HasTrait(id) })
		narrow(ex, "root_required="+t, x.pre.RootAdded(&x.req, i), left, keep)
	}
	for _, t := range x.req.RootForbidden {
		id, ok := x.s.TraitByName[t]
		keep := x.rootsWhere(func(p *readmodel.SnapProvider) bool { return !ok || !p.HasTrait(id) })
		narrow(ex, "root_required=!"+t, false, left, keep)
	}
}

func (x *explainer) rootsWhere(ok func(*readmodel.SnapProvider) bool) rootSet {
	set := rootSet{}
	for _, r := range x.s.Roots {
		if ok(&x.s.Providers[r]) {
			set[r] = true
		}
	}
	return set
}

// groupStages adds the groups one at a time, then same_subtree and
// group_policy. Each stage counts the roots with candidates under every
// constraint so far; a candidate counts at the root of its first
// non-sharing provider (its sharing provider's own root when it has
// none), so a stage may also gain a root: one whose tree a later group
// brings in beside the sharing providers an earlier one used alone.
func (x *explainer) groupStages(ex *Explanation, prev rootSet) error {
	base := cloneRequest(x.req)
	base.SameSubtree, base.GroupPolicy = nil, ""
	x.alone = make([]rootSet, len(x.req.Groups))
	for i, g := range x.req.Groups {
		upTo := cloneRequest(base)
		upTo.Groups = upTo.Groups[:i+1]
		set, _, err := x.rootsOf(upTo)
		if err != nil {
			return err
		}
		name := "group " + groupLabel(g.Suffix)
		if i > 0 {
			name = "+ " + name
		}
		prev = step(ex, name, prev, set)
		if x.alone[i], err = x.aloneSet(base, i, set); err != nil {
			return err
		}
	}
	x.together = prev
	sub := cloneRequest(base)
	sub.SameSubtree = x.req.SameSubtree
	var err error
	if x.subtree, _, err = x.rootsOf(sub); err != nil {
		return err
	}
	if len(x.req.SameSubtree) > 0 {
		prev = step(ex, "same_subtree", prev, x.subtree)
	}
	if x.full, ex.Generated, err = x.rootsOf(x.req); err != nil {
		return err
	}
	if x.req.GroupPolicy == candidates.PolicyIsolate {
		step(ex, "group_policy=isolate", prev, x.full)
	}
	return nil
}

// aloneSet is the roots with candidates for group i by itself (root
// filters applied); upTo is the set of the groups up to i, the same for
// the first.
func (x *explainer) aloneSet(base candidates.Request, i int, upTo rootSet) (rootSet, error) {
	if i == 0 {
		return upTo, nil
	}
	one := cloneRequest(base)
	one.Groups = []candidates.Group{one.Groups[i]}
	set, _, err := x.rootsOf(one)
	return set, err
}

// step records a stage that went from the roots of prev to those of cur.
func step(ex *Explanation, name string, prev, cur rootSet) rootSet {
	gone := 0
	for r := range prev {
		if !cur[r] {
			gone++
		}
	}
	ex.Stages = append(ex.Stages, Stage{Name: name, Removed: gone, Left: len(cur)})
	return cur
}

// narrow keeps in left only the roots of keep and records the stage.
func narrow(ex *Explanation, name string, pre bool, left, keep rootSet) {
	n := len(left)
	for r := range left {
		if !keep[r] {
			delete(left, r)
		}
	}
	ex.Stages = append(ex.Stages, Stage{Name: name, Prefilter: pre, Removed: n - len(left), Left: len(left)})
}

// groupLabel names a group as the query does: "" is the unsuffixed one.
func groupLabel(suffix string) string {
	if suffix == "" {
		return "(unsuffixed)"
	}
	return suffix
}

// cloneRequest copies req deeply enough that relaxing the copy leaves
// req as it was.
func cloneRequest(req candidates.Request) candidates.Request {
	out := req
	out.RootRequired = slices.Clone(req.RootRequired)
	out.RootForbidden = slices.Clone(req.RootForbidden)
	out.SameSubtree = make([][]string, len(req.SameSubtree))
	for i, set := range req.SameSubtree {
		out.SameSubtree[i] = slices.Clone(set)
	}
	out.Groups = make([]candidates.Group, len(req.Groups))
	for i, g := range req.Groups {
		c := g
		c.Resources = slices.Clone(g.Resources)
		c.Required = cloneClauses(g.Required)
		c.Forbidden = slices.Clone(g.Forbidden)
		c.MemberOf = cloneClauses(g.MemberOf)
		c.ForbiddenAggs = slices.Clone(g.ForbiddenAggs)
		out.Groups[i] = c
	}
	return out
}

func cloneClauses(in [][]string) [][]string {
	if in == nil {
		return nil
	}
	out := make([][]string, len(in))
	for i, cl := range in {
		out[i] = slices.Clone(cl)
	}
	return out
}

// plural spells n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
