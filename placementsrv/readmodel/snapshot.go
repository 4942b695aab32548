package readmodel

import "sort"

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

	Classes []string // resource class names by ClassID
	// ClassDBIDs are the classes' store ids by ClassID (0 where unknown).
	ClassDBIDs  []int64
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
	// SharedClass reports, per class, whether a sharing provider has an
	// inventory of it.
	SharedClass []bool

	// states holds what writes change without reshaping the cloud
	// (usage, inventory amounts, generation, twins), by provider index in
	// chunks, so that Patched copies the touched chunks only and shares
	// the rest (Providers included) with the snapshot it came from.
	states []*stateChunk
}

// stateChunkSize providers' states are copied together by Patched: small
// enough that a claim copies a few KiB, large enough that the chunk list
// of 100k providers is a few KiB too.
const stateChunkSize = 256

type stateChunk [stateChunkSize]ProviderState

// ProviderState is the part of a provider that writes to inventories and
// allocations change.
type ProviderState struct {
	Generation int64
	// Inventories are ordered by Class.
	Inventories []SnapInventory
	// Twin is the lowest-indexed sibling interchangeable with this
	// provider (a non-sharing leaf with the same parent, inventories,
	// usage, traits and aggregates), or the provider itself. Searches use
	// it to avoid exploring mirror-image branches.
	Twin int32
}

// State returns provider p's state.
func (s *Snapshot) State(p int32) *ProviderState {
	return &s.states[p/stateChunkSize][p%stateChunkSize]
}

// Inventories returns provider p's inventories, ordered by class.
func (s *Snapshot) Inventories(p int32) []SnapInventory { return s.State(p).Inventories }

// Inventory returns provider p's inventory of class c, or nil.
func (s *Snapshot) Inventory(p, c int32) *SnapInventory {
	inv, _ := InventoryOf(s.State(p).Inventories, c)
	return inv
}

// ClassDBID returns class c's store id, or 0 where unknown.
func (s *Snapshot) ClassDBID(c int32) int64 {
	if int(c) < len(s.ClassDBIDs) {
		return s.ClassDBIDs[c]
	}
	return 0
}

// SnapProvider is one provider in a Snapshot.
type SnapProvider struct {
	// ID is the provider's store id (0 where unknown).
	ID   int64
	UUID string
	Name string
	// Parent is -1 for a root; Root is the provider's own index for a root.
	Parent int32
	Root   int32
	// Children are indexes of the direct children, ascending.
	Children []int32
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

// InventoryOf returns the inventory of class c in inv (ordered by class)
// and its position, or nil and -1.
func InventoryOf(inv []SnapInventory, c int32) (*SnapInventory, int) {
	// Inventories are few per provider; a linear scan beats a search.
	for i := range inv {
		if inv[i].Class == c {
			return &inv[i], i
		}
		if inv[i].Class > c {
			break
		}
	}
	return nil, -1
}

// HasTrait reports whether p has trait t.
func (p *SnapProvider) HasTrait(t int32) bool { return containsSorted(p.Traits, t) }

// InAggregate reports whether p is a member of aggregate a.
func (p *SnapProvider) InAggregate(a int32) bool { return containsSorted(p.Aggregates, a) }

// HasAnyTrait reports whether p has one of traits.
func (p *SnapProvider) HasAnyTrait(traits []int32) bool {
	for _, t := range traits {
		if p.HasTrait(t) {
			return true
		}
	}
	return false
}

// InAnyAggregate reports whether p is a member of one of aggs.
func (p *SnapProvider) InAnyAggregate(aggs []int32) bool {
	for _, a := range aggs {
		if p.InAggregate(a) {
			return true
		}
	}
	return false
}

// Fits reports whether amount can be allocated from inv by itself:
// capacity left, min/max unit and step size.
func (inv *SnapInventory) Fits(amount int64) bool {
	return inv.Used+amount <= inv.Capacity && amount >= inv.MinUnit &&
		amount <= inv.MaxUnit && inv.StepSize > 0 && amount%inv.StepSize == 0
}

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
