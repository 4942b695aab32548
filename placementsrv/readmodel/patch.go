package readmodel

import (
	"slices"
)

// UsagePatch is the new state of one provider after writes that changed
// only its usage, inventory amounts and generation: the same inventory
// classes, any new amounts.
type UsagePatch struct {
	Provider    int32
	Generation  int64
	Inventories []SnapInventory // any order; Patched sorts them
}

// Patched returns the snapshot at version v that differs from s only by
// the patches, sharing everything else with s (which stays unchanged for
// its readers), or nil when a patch changes a provider's set of classes
// (the per-class indexes would change: rebuild instead). Only the state
// chunks of patched providers and of their siblings are copied, so the
// cost follows the patches, not the cloud; twins are recomputed among
// the patched providers' siblings, since usage is part of a twin's shape.
func (s *Snapshot) Patched(v uint64, patches []UsagePatch) *Snapshot {
	ns := *s
	ns.Version = v
	if len(patches) == 0 {
		return &ns
	}
	for _, pt := range patches {
		sortInventories(pt.Inventories)
		if !sameClasses(s.State(pt.Provider).Inventories, pt.Inventories) {
			return nil
		}
	}
	ns.states = slices.Clone(s.states)
	copied := map[int32]bool{}
	own := func(p int32) *ProviderState {
		if c := p / stateChunkSize; !copied[c] {
			copied[c] = true
			chunk := *ns.states[c]
			ns.states[c] = &chunk
		}
		return ns.State(p)
	}
	var parents []int32
	for _, pt := range patches {
		st := own(pt.Provider)
		st.Generation, st.Inventories = pt.Generation, pt.Inventories
		if par := s.Providers[pt.Provider].Parent; par >= 0 {
			parents = append(parents, par)
		}
	}
	slices.Sort(parents)
	for _, par := range slices.Compact(parents) {
		kids := ns.Providers[par].Children
		for _, k := range kids {
			own(k).Twin = k
		}
		siblingTwins(&ns, kids)
	}
	return &ns
}

// sameClasses reports whether two class-ordered inventory lists hold the
// same classes.
func sameClasses(a, b []SnapInventory) bool {
	return slices.EqualFunc(a, b, func(x, y SnapInventory) bool { return x.Class == y.Class })
}
