package store

import (
	"cmp"
	"slices"
	"sort"
)

// Snapshot is an immutable, plain-data read model of everything allocation
// candidates need: providers with their tree links, inventories, usage,
// traits and aggregates. Names are interned: classes, traits and
// aggregates are small integers indexing Classes, Traits and Aggregates,
// and providers link to each other by index into Providers. A Snapshot is
// shared by concurrent readers and must never be modified.
type Snapshot struct {
	// Version is the store's write counter the snapshot reflects.
	Version uint64

	// Providers in ascending creation (internal id) order.
	Providers []SnapProvider
	// ByUUID maps a provider uuid to its index in Providers.
	ByUUID map[string]int32

	Classes     []string // resource class names by ClassID
	ClassByName map[string]int32
	Traits      []string // trait names by TraitID
	TraitByName map[string]int32
	Aggregates  []string // aggregate uuids by AggID
	AggByUUID   map[string]int32

	// ByClass lists, per class, the providers with an inventory of it in
	// ascending index order.
	ByClass [][]int32
	// Roots lists the root providers in ascending index order.
	Roots []int32
	// HasTrees reports whether any provider has a parent.
	HasTrees bool
	// SharingTrait is the TraitID of MISC_SHARES_VIA_AGGREGATE, or -1.
	SharingTrait int32
	// AggMembers lists the member providers per aggregate, ascending.
	AggMembers [][]int32
}

// SnapProvider is one provider in a Snapshot.
type SnapProvider struct {
	UUID       string
	Name       string
	Generation int64
	// Parent is -1 for a root; Root is the provider's own index for a root.
	Parent int32
	Root   int32
	// Children are indexes of the direct children, ascending.
	Children []int32
	// Inventories are ordered by Class.
	Inventories []SnapInventory
	// Traits and Aggregates are sorted ids.
	Traits     []int32
	Aggregates []int32
	// Sharing reports the MISC_SHARES_VIA_AGGREGATE trait.
	Sharing bool
	// Anchors, for a sharing provider, lists the roots (other than its
	// own) of the trees with a provider in one of its aggregates.
	Anchors []int32
	// Tree, for a root, lists the whole tree in depth-first preorder
	// (the root first); nil for other providers.
	Tree []int32
	// SharedTo, for a root, lists the sharing providers of other trees
	// that this root anchors (the inverse of Anchors), ascending.
	SharedTo []int32
	// Twin is the lowest-indexed sibling interchangeable with this
	// provider (a non-sharing leaf with the same parent, inventories,
	// usage, traits and aggregates), or the provider itself. Searches use
	// it to avoid exploring mirror-image branches.
	Twin int32
}

// SnapInventory is one inventory with the current usage of its class.
type SnapInventory struct {
	Class           int32
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64
	Used            int64
	// Capacity is int((Total-Reserved)*AllocationRatio), as Placement
	// computes it.
	Capacity int64
}

// Inventory returns p's inventory of class c, or nil.
func (p *SnapProvider) Inventory(c int32) *SnapInventory {
	inv := p.Inventories
	// Inventories are few per provider; a linear scan beats a search.
	for i := range inv {
		if inv[i].Class == c {
			return &inv[i]
		}
		if inv[i].Class > c {
			break
		}
	}
	return nil
}

// HasTrait reports whether p has trait t.
func (p *SnapProvider) HasTrait(t int32) bool { return containsSorted(p.Traits, t) }

// InAggregate reports whether p is a member of aggregate a.
func (p *SnapProvider) InAggregate(a int32) bool { return containsSorted(p.Aggregates, a) }

func containsSorted(s []int32, v int32) bool {
	if len(s) < 16 {
		for _, x := range s {
			if x == v {
				return true
			}
			if x > v {
				return false
			}
		}
		return false
	}
	i := sort.Search(len(s), func(i int) bool { return s[i] >= v })
	return i < len(s) && s[i] == v
}

// SnapshotStore gives the read model allocation candidates are computed
// from.
type SnapshotStore interface {
	// Snapshot returns a snapshot that reflects at least every write
	// committed before the call started.
	Snapshot(ctx Ctx) (*Snapshot, error)
}

// SnapshotBuilder assembles a Snapshot from per-provider data; store
// implementations feed it and call Finish. It interns names and computes
// the derived indexes (ByClass, Roots, sharing anchors).
type SnapshotBuilder struct {
	s *Snapshot
}

// NewSnapshotBuilder starts a snapshot of n providers at version v.
func NewSnapshotBuilder(v uint64, n int) *SnapshotBuilder {
	return &SnapshotBuilder{s: &Snapshot{
		Version:      v,
		Providers:    make([]SnapProvider, 0, n),
		ByUUID:       make(map[string]int32, n),
		ClassByName:  map[string]int32{},
		TraitByName:  map[string]int32{},
		AggByUUID:    map[string]int32{},
		SharingTrait: -1,
	}}
}

// intern returns name's id in names, appending it when new.
func intern(names *[]string, ids map[string]int32, name string) int32 {
	if id, ok := ids[name]; ok {
		return id
	}
	id := int32(len(*names))
	*names = append(*names, name)
	ids[name] = id
	return id
}

// Class interns a resource class name.
func (b *SnapshotBuilder) Class(name string) int32 {
	return intern(&b.s.Classes, b.s.ClassByName, name)
}

// Trait interns a trait name.
func (b *SnapshotBuilder) Trait(name string) int32 {
	id := intern(&b.s.Traits, b.s.TraitByName, name)
	if name == "MISC_SHARES_VIA_AGGREGATE" {
		b.s.SharingTrait = id
	}
	return id
}

// Aggregate interns an aggregate uuid.
func (b *SnapshotBuilder) Aggregate(uuid string) int32 {
	return intern(&b.s.Aggregates, b.s.AggByUUID, uuid)
}

// AddProvider appends a provider (tree links are resolved by Finish) and
// returns its index.
func (b *SnapshotBuilder) AddProvider(p SnapProvider) int32 {
	s := b.s
	idx := int32(len(s.Providers))
	p.Parent, p.Root = -1, idx
	s.Providers = append(s.Providers, p)
	s.ByUUID[p.UUID] = idx
	return idx
}

// Finish resolves tree links, sorts the per provider id lists and
// computes the derived indexes. parentOf returns the index of provider
// i's parent, or -1 for a root.
func (b *SnapshotBuilder) Finish(parentOf func(i int) int32) *Snapshot {
	s := b.s
	ps := s.Providers
	for i := range ps {
		if pi := parentOf(i); pi >= 0 {
			ps[i].Parent = pi
			ps[pi].Children = append(ps[pi].Children, int32(i))
			s.HasTrees = true
		}
	}
	// Roots: follow parents (depth is small).
	for i := range ps {
		r := int32(i)
		for ps[r].Parent >= 0 {
			r = ps[r].Parent
		}
		ps[i].Root = r
		if r == int32(i) {
			s.Roots = append(s.Roots, r)
		}
	}
	s.ByClass = make([][]int32, len(s.Classes))
	s.AggMembers = make([][]int32, len(s.Aggregates))
	for i := range ps {
		p := &ps[i]
		sortInt32(p.Traits)
		sortInt32(p.Aggregates)
		slices.SortFunc(p.Inventories, func(a, c SnapInventory) int { return cmp.Compare(a.Class, c.Class) })
		for _, inv := range p.Inventories {
			s.ByClass[inv.Class] = append(s.ByClass[inv.Class], int32(i))
		}
		for _, a := range p.Aggregates {
			s.AggMembers[a] = append(s.AggMembers[a], int32(i))
		}
		p.Sharing = s.SharingTrait >= 0 && p.HasTrait(s.SharingTrait)
	}
	for i := range ps {
		p := &ps[i]
		if !p.Sharing || len(p.Aggregates) == 0 {
			continue
		}
		seen := map[int32]bool{p.Root: true}
		for _, a := range p.Aggregates {
			for _, m := range s.AggMembers[a] {
				r := ps[m].Root
				if !seen[r] {
					seen[r] = true
					p.Anchors = append(p.Anchors, r)
				}
			}
		}
		sortInt32(p.Anchors)
		for _, r := range p.Anchors {
			ps[r].SharedTo = append(ps[r].SharedTo, int32(i))
		}
	}
	for _, r := range s.Roots {
		ps[r].Tree = appendTree(ps, ps[r].Tree, r)
	}
	findTwins(ps)
	b.s = nil
	return s
}

// appendTree appends p and its descendants in preorder.
func appendTree(ps []SnapProvider, out []int32, p int32) []int32 {
	out = append(out, p)
	for _, c := range ps[p].Children {
		out = appendTree(ps, out, c)
	}
	return out
}

// findTwins sets Twin for every provider: siblings that are leaves, not
// sharing, with equal inventories (usage included), traits and
// aggregates point at the first such sibling.
func findTwins(ps []SnapProvider) {
	for i := range ps {
		ps[i].Twin = int32(i)
	}
	for i := range ps {
		siblingTwins(ps, ps[i].Children)
	}
}

// siblingTwins sets Twin among the children of one provider, whose Twin
// fields point at themselves.
func siblingTwins(ps []SnapProvider, kids []int32) {
	if len(kids) < 2 {
		return
	}
	for a, x := range kids {
		px := &ps[x]
		if px.Twin != x || !twinnable(px) {
			continue
		}
		for _, y := range kids[a+1:] {
			py := &ps[y]
			if py.Twin == y && twinnable(py) && sameShape(px, py) {
				py.Twin = x
			}
		}
	}
}

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

func twinnable(p *SnapProvider) bool { return len(p.Children) == 0 && !p.Sharing }

func sameShape(a, b *SnapProvider) bool {
	return slices.Equal(a.Inventories, b.Inventories) &&
		slices.Equal(a.Traits, b.Traits) && slices.Equal(a.Aggregates, b.Aggregates)
}

func sortInt32(s []int32) {
	if len(s) > 1 {
		slices.Sort(s)
	}
}
