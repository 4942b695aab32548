package agent

import (
	"maps"
	"slices"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// actual is what Placement holds for one provider, as last read or
// written. aggs is nil when not read.
type actual struct {
	gen    int
	invs   map[string]placementclient.Inventory
	traits []string
	aggs   []string
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
