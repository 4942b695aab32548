package readmodel

import (
	"cmp"
	"slices"
)

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
	id := intern(&b.s.Classes, b.s.ClassByName, name)
	if int(id) == len(b.s.ClassDBIDs) {
		// Until ClassWithID says otherwise, a distinct stand-in.
		b.s.ClassDBIDs = append(b.s.ClassDBIDs, int64(id))
	}
	return id
}

// ClassWithID interns a resource class name and records its store id.
func (b *SnapshotBuilder) ClassWithID(name string, dbID int64) int32 {
	id := b.Class(name)
	b.s.ClassDBIDs[id] = dbID
	return id
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

// AddProvider appends a provider with its state (tree links and twins
// are resolved by Finish) and returns its index.
func (b *SnapshotBuilder) AddProvider(p SnapProvider, st ProviderState) int32 {
	s := b.s
	idx := int32(len(s.Providers))
	if idx%stateChunkSize == 0 {
		s.states = append(s.states, new(stateChunk))
	}
	*s.State(idx) = st
	p.Parent, p.Root = -1, idx
	if p.ID == 0 {
		// Builders without store ids: index order stands in for id order.
		p.ID = int64(idx) + 1
	}
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
		st := s.State(int32(i))
		sortInventories(st.Inventories)
		for _, inv := range st.Inventories {
			s.ByClass[inv.Class] = append(s.ByClass[inv.Class], int32(i))
		}
		for _, a := range p.Aggregates {
			s.AggMembers[a] = append(s.AggMembers[a], int32(i))
		}
		p.Sharing = s.SharingTrait >= 0 && p.HasTrait(s.SharingTrait)
	}
	s.SharedClass = make([]bool, len(s.Classes))
	for i := range ps {
		p := &ps[i]
		if p.Sharing {
			for _, inv := range s.State(int32(i)).Inventories {
				s.SharedClass[inv.Class] = true
			}
		}
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
	findTwins(s)
	b.s = nil
	return s
}

func sortInventories(invs []SnapInventory) {
	slices.SortFunc(invs, func(a, c SnapInventory) int { return cmp.Compare(a.Class, c.Class) })
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
func findTwins(s *Snapshot) {
	for i := range s.Providers {
		s.State(int32(i)).Twin = int32(i)
	}
	for i := range s.Providers {
		siblingTwins(s, s.Providers[i].Children)
	}
}

// siblingTwins sets Twin among the children of one provider, whose Twin
// fields point at themselves.
func siblingTwins(s *Snapshot, kids []int32) {
	if len(kids) < 2 {
		return
	}
	for a, x := range kids {
		sx := s.State(x)
		if sx.Twin != x || !twinnable(&s.Providers[x]) {
			continue
		}
		for _, y := range kids[a+1:] {
			sy := s.State(y)
			if sy.Twin == y && twinnable(&s.Providers[y]) && sameShape(s, x, y) {
				sy.Twin = x
			}
		}
	}
}

func twinnable(p *SnapProvider) bool { return len(p.Children) == 0 && !p.Sharing }

func sameShape(s *Snapshot, x, y int32) bool {
	a, b := &s.Providers[x], &s.Providers[y]
	return slices.Equal(s.State(x).Inventories, s.State(y).Inventories) &&
		slices.Equal(a.Traits, b.Traits) && slices.Equal(a.Aggregates, b.Aggregates)
}

func sortInt32(s []int32) {
	if len(s) > 1 {
		slices.Sort(s)
	}
}
