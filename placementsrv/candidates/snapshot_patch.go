package candidates

import (
	"cmp"
	"slices"
)

// UsagePatch is the new state of one provider after writes that changed
// only its usage and generation: the same inventory classes, new Used.
type UsagePatch struct {
	Provider    int32
	Generation  int64
	Inventories []SnapInventory // any order; Patched sorts them
}

// Patched returns the snapshot at version v that differs from s only by
// the patches, sharing everything else with s (which stays unchanged for
// its readers). Only the provider table is copied; twins are recomputed
// among the patched providers' siblings, since usage is part of a twin's
// shape.
func (s *Snapshot) Patched(v uint64, patches []UsagePatch) *Snapshot {
	ns := *s
	ns.Version = v
	if len(patches) == 0 {
		return &ns
	}
	ns.Providers = slices.Clone(s.Providers)
	ps := ns.Providers
	var parents []int32
	for _, pt := range patches {
		p := &ps[pt.Provider]
		slices.SortFunc(pt.Inventories, func(a, c SnapInventory) int { return cmp.Compare(a.Class, c.Class) })
		p.Generation, p.Inventories = pt.Generation, pt.Inventories
		if p.Parent >= 0 {
			parents = append(parents, p.Parent)
		}
	}
	slices.Sort(parents)
	for _, par := range slices.Compact(parents) {
		kids := ps[par].Children
		for _, k := range kids {
			ps[k].Twin = k
		}
		siblingTwins(ps, kids)
	}
	return &ns
}
