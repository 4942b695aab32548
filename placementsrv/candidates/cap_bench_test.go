package candidates

import (
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// wideRoots is roots copies of wideWorld's tree (bug 2126751's shape: a
// root with kids children of one device each), with store ids.
func wideRoots(roots, kids int) *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(1, roots*(kids+1))
	inv := func(class string, total int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: b.Class(class), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}
	}
	var parents []int32
	for r := range roots {
		root := int32(len(parents))
		b.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("cn%d", r), ID: int64(root) + 1},
			readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("VCPU", 8), inv("MEMORY_MB", 4096), inv("DISK_GB", 500)}})
		parents = append(parents, -1)
		for k := range kids {
			b.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("cn%d-pci%d", r, k), ID: int64(len(parents)) + 1},
				readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("CUSTOM_PCI_10DE_2330", 1)}})
			parents = append(parents, root)
		}
	}
	return b.Finish(func(i int) int32 { return parents[i] })
}

// granularWide is bug 2126751's request: groups independent granular
// groups of one device each, the flavor last.
func granularWide(groups int) Request {
	req := wideRequest(groups, 0)
	req.Groups = append(req.Groups[1:], req.Groups[0])
	return req
}

// BenchmarkFindCapped: Placement 15.0.0's max_allocation_candidates,
// strategies and optimize_for_wide_provider_trees on bug 2126751's shape.
// The cap stops generation: capped answers cost what they return.
func BenchmarkFindCapped(b *testing.B) {
	type setting struct {
		name string
		opt  Options
	}
	settings := []setting{
		{"depth-first", Options{NestedAware: true}},
		{"breadth-first", Options{NestedAware: true, Order: BreadthFirst}},
		{"breadth-first-wide", Options{NestedAware: true, Order: BreadthFirst, WideTrees: true}},
	}
	worlds := []struct {
		name     string
		s        *readmodel.Snapshot
		groups   int
		uncapped bool // also without a cap (40,320 candidates)
	}{
		{"1x8/groups=8", wideRoots(1, 8), 8, true},
		{"1x10/groups=8", wideRoots(1, 10), 8, false},
		{"100x8/groups=8", wideRoots(100, 8), 8, false},
	}
	for _, w := range worlds {
		req := granularWide(w.groups)
		for _, st := range settings {
			caps := []int{1000}
			if w.uncapped {
				caps = []int{0, 1000}
			}
			for _, c := range caps {
				opt := st.opt
				opt.MaxCandidates = c
				b.Run(fmt.Sprintf("%s/%s/cap=%d", w.name, st.name, c), func(b *testing.B) {
					benchFind(b, w.s, req, opt)
				})
			}
		}
	}
}

// BenchmarkFindCappedFlat: the cap on ../shared/bench's ac-simple request
// at 1,000 hosts, where breadth-first takes about one candidate from each
// of 1,300 roots; following the roots must not cost the cap at each.
func BenchmarkFindCappedFlat(b *testing.B) {
	s := benchWorld(1000)
	for _, o := range []struct {
		name string
		opt  Options
	}{
		{"depth-first", Options{NestedAware: true, MaxCandidates: 1000}},
		{"breadth-first", Options{NestedAware: true, MaxCandidates: 1000, Order: BreadthFirst}},
		{"breadth-first-wide", Options{NestedAware: true, MaxCandidates: 1000, Order: BreadthFirst, WideTrees: true}},
	} {
		b.Run(o.name, func(b *testing.B) { benchFind(b, s, Request{Groups: []Group{flavor}, Limit: 1000}, o.opt) })
	}
}
