package agent

import (
	"maps"
	"slices"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// actual is what Placement holds for one provider, as last read or
// written. aggs is nil when not read. readAt is when it was last known
// whole: read, or created. restored: loaded from the state file, and not
// yet checked against Placement's generation.
type actual struct {
	gen      int
	invs     map[string]placementclient.Inventory
	traits   []string
	aggs     []string
	readAt   time.Time
	restored bool
}

// created is what a provider holds right after it is created at now.
func created(gen int, now time.Time) actual {
	return actual{gen: gen, invs: map[string]placementclient.Inventory{}, traits: []string{}, aggs: []string{}, readAt: now}
}

// observed is what a pass knows of one provider before planning it.
type observed struct {
	exists bool
	have   actual
	// usages are read only when the desired inventory drops a class.
	usages *placementclient.Usages
}

// providerPlan is the writes one provider needs, in the order they are
// made: create, traits, inventories, aggregates.
type providerPlan struct {
	p      drivers.Provider
	parent string
	// have is what the plan starts from (an empty provider when it is
	// created).
	have   actual
	create bool
	// owned are the traits the agent owns on the provider after the pass.
	owned []string
	// traits and aggs are the sets to PUT; nil leaves them as they are.
	traits []string
	aggs   []string
	inv    invPlan
	putInv bool
	// staleUsages: the usages were read at another generation than the
	// inventory they judge, so the inventory write must re-read first.
	staleUsages bool
	// fallbackDeletes counts the unavailable classes the inventory write
	// deletes (servers older than 1.26).
	fallbackDeletes int
	// deferredTo is the trait of p.DeferTo that Placement's provider
	// carries: another service reports it, and the plan writes nothing.
	deferredTo string
}

// planProvider plans one provider from what is desired (p, under parent)
// and what Placement holds (obs). previously are the traits the agent
// owned on it before (nil: unknown). It is pure.
func planProvider(p drivers.Provider, parent string, obs observed, previously []string, reservedOK bool) providerPlan {
	if mark := deferredTo(p, obs); mark != "" {
		return providerPlan{p: p, parent: parent, have: obs.have, owned: previously, deferredTo: mark}
	}
	pp := providerPlan{p: p, parent: parent, have: obs.have, create: !obs.exists, owned: desiredTraits(p)}
	if pp.create {
		pp.have = created(0, time.Time{})
	}
	have := pp.have
	if t := planTraits(have.traits, pp.owned, previously); !slices.Equal(t, have.traits) {
		pp.traits = t
	}
	var usage map[string]int
	if obs.usages != nil {
		usage = obs.usages.Usages
		pp.staleUsages = obs.usages.Generation != have.gen
	}
	pp.inv = planInventories(p.Inventories, have.invs, usage, reservedOK)
	pp.putInv = !inventoriesEqual(pp.inv.invs, have.invs)
	for _, rc := range pp.inv.fallbackDeleted {
		if _, had := have.invs[rc]; had && !slices.Contains(pp.inv.keptInUse, rc) {
			pp.fallbackDeletes++
		}
	}
	if p.Aggregates != nil {
		if want := sortedCopy(p.Aggregates); !slices.Equal(want, have.aggs) {
			pp.aggs = want
		}
	}
	return pp
}

// deferredTo is the first trait of p.DeferTo that the existing provider
// carries and p does not want itself, or "".
func deferredTo(p drivers.Provider, obs observed) string {
	if !obs.exists {
		return ""
	}
	for _, mark := range p.DeferTo {
		if slices.Contains(obs.have.traits, mark) && !slices.Contains(p.Traits, mark) {
			return mark
		}
	}
	return ""
}

// memory is what the agent remembers across passes that a plan depends
// on: the traits it set on each provider and the custom names it
// created.
type memory struct {
	owned           map[string][]string
	classes, traits map[string]bool
}

// treePlan is one pass's writes for a driver's tree.
type treePlan struct {
	// classes and traits are the custom names that the planned writes
	// use and that the agent has not created yet; they are written
	// first, once. A provider that needs no write needs no name, so an
	// unchanged pass writes nothing, even in a fresh process.
	classes, traits []string
	// groups are written concurrently, each in order.
	groups [][]providerPlan
}

// writes reports whether the plan writes anything for the provider.
func (pp providerPlan) writes() bool {
	return pp.create || pp.traits != nil || pp.putInv || pp.aggs != nil
}

// putClasses are the classes the inventory write sets that the driver
// wants; the others (kept in use) are on the provider, so exist.
func (pp providerPlan) putClasses() []string {
	if !pp.putInv {
		return nil
	}
	var out []string
	for rc := range pp.p.Inventories {
		if _, ok := pp.inv.invs[rc]; ok {
			out = append(out, rc)
		}
	}
	return out
}

// planTree plans the whole pass from the desired tree, what Placement
// holds (st) and what the agent remembers (mem). It is pure.
func planTree(tree *drivers.Tree, st *treeState, mem memory) treePlan {
	var plan treePlan
	for _, g := range st.groups {
		if len(g) == 0 {
			continue
		}
		pg := make([]providerPlan, len(g))
		for i, p := range g {
			pg[i] = planProvider(p, st.parentOf[p.UUID], st.observed[p.UUID], mem.owned[p.UUID], st.reservedOK)
		}
		plan.groups = append(plan.groups, pg)
	}
	classes := map[string]bool{}
	var traits []string
	for _, g := range plan.groups {
		for _, pp := range g {
			for _, rc := range pp.putClasses() {
				classes[rc] = true
			}
			if pp.traits != nil {
				traits = append(traits, pp.owned...)
			}
		}
	}
	plan.classes = missingCustom(slices.Sorted(maps.Keys(classes)), mem.classes)
	plan.traits = missingCustom(sortedCopy(traits), mem.traits)
	return plan
}

// missingCustom returns the custom names among names that are not done.
func missingCustom(names []string, done map[string]bool) []string {
	var out []string
	for _, n := range names {
		if drivers.IsCustom(n) && !done[n] {
			out = append(out, n)
		}
	}
	return out
}

// invPlan is the inventory a provider should have, and what it took.
type invPlan struct {
	invs map[string]placementclient.Inventory
	// fallbackDeleted are unavailable classes removed because the server
	// cannot take reserved == total (< 1.26).
	fallbackDeleted []string
	// keptInUse are classes that should go but have allocations, so they
	// stay as they are.
	keptInUse []string
}

// planInventories computes the inventory to PUT. Unavailable classes are
// reserved == total when reservedOK, else left out (deleted). Classes to
// drop that have allocations (usage > 0) are kept as they are; usage is
// nil when not read, in which case nothing is known to be in use.
func planInventories(want map[string]drivers.Inventory, have map[string]placementclient.Inventory, usage map[string]int, reservedOK bool) invPlan {
	p := invPlan{invs: make(map[string]placementclient.Inventory, len(want))}
	for rc, inv := range want {
		rec := placementclient.Inventory{
			Total: inv.Total, Reserved: inv.Reserved, MinUnit: inv.MinUnit, MaxUnit: inv.MaxUnit,
			StepSize: inv.StepSize, AllocationRatio: inv.AllocationRatio,
		}.WithDefaults()
		if inv.Unavailable != "" {
			if !reservedOK {
				p.fallbackDeleted = append(p.fallbackDeleted, rc)
				continue
			}
			rec.Reserved = rec.Total
		}
		p.invs[rc] = rec
	}
	for rc, rec := range have {
		if _, ok := p.invs[rc]; !ok && usage[rc] > 0 {
			p.invs[rc] = rec
			p.keptInUse = append(p.keptInUse, rc)
		}
	}
	slices.Sort(p.fallbackDeleted)
	slices.Sort(p.keptInUse)
	return p
}

// removes reports whether replacing have with want drops any class.
func removes(have, want map[string]placementclient.Inventory) bool {
	for rc := range have {
		if _, ok := want[rc]; !ok {
			return true
		}
	}
	return false
}

// inventoriesEqual compares two inventories record by record.
func inventoriesEqual(a, b map[string]placementclient.Inventory) bool {
	return maps.EqualFunc(a, b, placementclient.Inventory.Equal)
}

// planTraits computes the trait set to PUT: keep every trait the agent
// does not own, drop those it owned before but no longer wants, add those
// it wants. previously is nil when unknown (after a restart).
func planTraits(have, want, previously []string) []string {
	drop := map[string]bool{}
	for _, t := range previously {
		if !slices.Contains(want, t) {
			drop[t] = true
		}
	}
	out := make([]string, 0, len(have)+len(want))
	for _, t := range have {
		if !drop[t] {
			out = append(out, t)
		}
	}
	out = append(out, want...)
	slices.Sort(out)
	return slices.Compact(out)
}

// desiredTraits is a provider's owned traits: its Traits and its Owner.
func desiredTraits(p drivers.Provider) []string {
	out := slices.Clone(p.Traits)
	if p.Owner != "" {
		out = append(out, p.Owner)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedCopy returns s sorted, never nil.
func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return slices.Compact(out)
}
