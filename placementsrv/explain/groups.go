package explain

import (
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// provFilter is one of a group's provider-level constraints: a name for
// the funnel and the test a provider must pass.
type provFilter struct {
	name      string
	prefilter bool
	ok        func(p int32) bool
	// why says what p lacks, for a near miss.
	why func(p int32) string
}

// filters lists group gi's provider-level constraints in the order the
// funnel applies them: in_tree, member_of, !member_of, required traits,
// forbidden traits.
func (x *explainer) filters(gi int) []provFilter {
	g := &x.req.Groups[gi]
	s := x.s
	var out []provFilter
	if g.InTree != "" {
		root := int32(-1)
		if p, ok := s.ByUUID[g.InTree]; ok {
			root = s.Providers[p].Root
		}
		out = append(out, provFilter{name: "in_tree" + g.Suffix + "=" + g.InTree,
			ok:  func(p int32) bool { return s.Providers[p].Root == root },
			why: func(int32) string { return "not in tree " + g.InTree }})
	}
	for _, cl := range g.MemberOf {
		aggs := aggIDs(s, cl)
		out = append(out, provFilter{name: "member_of" + g.Suffix + "=" + anyOfText(cl),
			ok:  func(p int32) bool { return s.Providers[p].InAnyAggregate(aggs) },
			why: func(int32) string { return "not in aggregate " + anyOfText(cl) }})
	}
	if len(g.ForbiddenAggs) > 0 {
		bad := aggIDs(s, g.ForbiddenAggs)
		out = append(out, provFilter{name: "member_of" + g.Suffix + "=!" + strings.Join(g.ForbiddenAggs, ","),
			ok:  func(p int32) bool { return !s.Providers[p].InAnyAggregate(bad) },
			why: func(int32) string { return "in a forbidden aggregate" }})
	}
	for _, cl := range g.Required {
		ids := knownTraits(s, cl)
		out = append(out, provFilter{name: "required" + g.Suffix + "=" + anyOfText(cl),
			ok:  func(p int32) bool { return s.Providers[p].HasAnyTrait(ids) },
			why: func(int32) string { return "missing trait " + anyOfText(cl) }})
	}
	for i, t := range g.Forbidden {
		id, known := s.TraitByName[t]
		pre := x.pre.ForbiddenAdded(&x.req, gi, i)
		why := "has forbidden trait " + t
		if pre {
			why += " (OWNER_NOVA pre-filter)"
		}
		out = append(out, provFilter{name: "required" + g.Suffix + "=!" + t, prefilter: pre,
			ok:  func(p int32) bool { return !known || !s.Providers[p].HasTrait(id) },
			why: func(int32) string { return why }})
	}
	return out
}

func aggIDs(s *readmodel.Snapshot, uuids []string) []int32 {
	var out []int32
	for _, u := range uuids {
		if a, ok := s.AggByUUID[u]; ok {
			out = append(out, a)
		}
	}
	return out
}

func knownTraits(s *readmodel.Snapshot, names []string) []int32 {
	var out []int32
	for _, n := range names {
		if t, ok := s.TraitByName[n]; ok {
			out = append(out, t)
		}
	}
	return out
}

// groupFunnel counts group gi's providers through its filters, then
// splits the survivors by how each requested amount fits.
func (x *explainer) groupFunnel(gi int) GroupFunnel {
	g := &x.req.Groups[gi]
	s := x.s
	var left []int32
	for p := range s.Providers {
		if len(g.Resources) == 0 || x.hasAnyClass(g, int32(p)) {
			left = append(left, int32(p))
		}
	}
	f := GroupFunnel{Group: groupLabel(g.Suffix), Providers: len(left)}
	for _, flt := range x.filters(gi) {
		n := len(left)
		kept := left[:0]
		for _, p := range left {
			if flt.ok(p) {
				kept = append(kept, p)
			}
		}
		left = kept
		f.Stages = append(f.Stages, Stage{Name: flt.name, Prefilter: flt.prefilter, Removed: n - len(left), Left: len(left)})
	}
	for _, r := range g.Resources {
		f.Classes = append(f.Classes, x.classCount(r, left))
	}
	return f
}

func (x *explainer) hasAnyClass(g *candidates.Group, p int32) bool {
	for _, r := range g.Resources {
		if c, ok := x.s.ClassByName[r.Class]; ok && x.s.Inventory(p, c) != nil {
			return true
		}
	}
	return false
}

// classCount splits provs by how they meet amount r.
func (x *explainer) classCount(r candidates.Resource, provs []int32) ClassCount {
	cc := ClassCount{Class: r.Class, Amount: r.Amount}
	c, known := x.s.ClassByName[r.Class]
	if !known {
		return cc
	}
	for _, p := range provs {
		inv := x.s.Inventory(p, c)
		switch {
		case inv == nil:
			continue
		case heldBack(inv):
			cc.HeldBack++
		case !inv.Fits(r.Amount):
			cc.NoFit++
		default:
			cc.Fit++
			if x.s.Providers[p].Sharing {
				cc.Sharing++
			}
		}
		cc.With++
	}
	return cc
}

// heldBack reports an inventory reserved in full (reserved == total), as
// the agent holds back a cleaning node or an FPGA being programmed.
func heldBack(inv *readmodel.SnapInventory) bool { return inv.Total > 0 && inv.Reserved >= inv.Total }

// shortfall says why amount does not fit inv, or "" when it does.
func shortfall(class string, inv *readmodel.SnapInventory, amount int64) string {
	switch {
	case inv == nil:
		return "no " + class + " inventory"
	case heldBack(inv):
		return class + ": held back: reserved == total (" + itoa64(inv.Total) + ")"
	case inv.Used+amount > inv.Capacity:
		return class + ": needs " + itoa64(amount) + ", free " + itoa64(max(inv.Capacity-inv.Used, 0)) +
			" (total " + itoa64(inv.Total) + " × " + ratio(inv.AllocationRatio) + " − reserved " +
			itoa64(inv.Reserved) + " − used " + itoa64(inv.Used) + ")"
	case amount < inv.MinUnit:
		return class + ": needs " + itoa64(amount) + ", min_unit " + itoa64(inv.MinUnit)
	case amount > inv.MaxUnit:
		return class + ": needs " + itoa64(amount) + ", max_unit " + itoa64(inv.MaxUnit)
	case inv.StepSize <= 0 || amount%inv.StepSize != 0:
		return class + ": needs " + itoa64(amount) + ", step_size " + itoa64(inv.StepSize)
	}
	return ""
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// ratio prints an allocation ratio as Placement shows it: 1.0, 16.0, 1.5.
func ratio(r float64) string {
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
