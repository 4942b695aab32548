// Package randworld generates small random clouds and allocation
// candidates requests for property tests: those of candidates (against
// its oracle) and of explain (against candidates' answers). A world is
// a list of providers that Build turns into a readmodel.Snapshot; a
// request is spelled in plain types mirroring candidates.Request, so that
// candidates' own tests can import this package (it must not import
// candidates) and each test converts it. The sequence of random draws is
// part of the contract: seeds the tests name keep their worlds.
package randworld

import (
	"fmt"
	"math/rand/v2"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// The names worlds draw from.
var (
	Classes    = []string{"VCPU", "MEMORY_MB", "DISK_GB", "CUSTOM_A"}
	Traits     = []string{"T0", "T1", "T2", "T3", "MISC_SHARES_VIA_AGGREGATE"}
	Aggregates = []string{"agg0", "agg1", "agg2"}
)

// Prov is one provider of a generated world, kept in a form that can be
// turned into a snapshot. Invs name their class by its index in Classes.
type Prov struct {
	UUID, Parent string
	Invs         []readmodel.SnapInventory
	Traits       []string
	Aggs         []string
}

// Build turns a world into a snapshot: Classes and Traits interned first,
// in their order, providers in the world's order.
func Build(ws []Prov) *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(1, len(ws))
	for _, c := range Classes {
		b.Class(c)
	}
	for _, t := range Traits {
		b.Trait(t)
	}
	for _, w := range ws {
		sp := readmodel.SnapProvider{UUID: w.UUID, Name: w.UUID}
		st := readmodel.ProviderState{Inventories: append([]readmodel.SnapInventory(nil), w.Invs...)}
		for _, t := range w.Traits {
			sp.Traits = append(sp.Traits, b.Trait(t))
		}
		for _, a := range w.Aggs {
			sp.Aggregates = append(sp.Aggregates, b.Aggregate(a))
		}
		b.AddProvider(sp, st)
	}
	return b.Finish(func(i int) int32 {
		if ws[i].Parent == "" {
			return -1
		}
		for j := range ws {
			if ws[j].UUID == ws[i].Parent {
				return int32(j)
			}
		}
		return -1
	})
}

// Pick draws one of xs.
func Pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func subset[T any](r *rand.Rand, xs []T, p float64) []T {
	var out []T
	for _, x := range xs {
		if r.Float64() < p {
			out = append(out, x)
		}
	}
	return out
}

// NewInv draws an inventory of class (an index in Classes), sometimes
// reserved, overcommitted, unit-bounded, stepped or in use.
func NewInv(r *rand.Rand, class int32) readmodel.SnapInventory {
	total := int64(1 + r.IntN(6))
	inv := readmodel.SnapInventory{Class: class, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1}
	if r.IntN(4) == 0 {
		inv.Reserved = 1
	}
	if r.IntN(4) == 0 {
		inv.AllocationRatio = 1.5
	}
	if r.IntN(4) == 0 {
		inv.MaxUnit = 1 + int64(r.IntN(int(total)))
	}
	if r.IntN(6) == 0 {
		inv.StepSize = 2
	}
	inv.Capacity = int64(float64(inv.Total-inv.Reserved) * inv.AllocationRatio)
	if inv.Capacity > 0 && r.IntN(3) == 0 {
		inv.Used = int64(r.IntN(int(inv.Capacity) + 1))
	}
	return inv
}

func newProv(r *rand.Rand, uuid, parent string, invP float64) Prov {
	w := Prov{UUID: uuid, Parent: parent}
	for c := range Classes {
		if r.Float64() < invP {
			w.Invs = append(w.Invs, NewInv(r, int32(c)))
		}
	}
	w.Traits = subset(r, Traits[:4], 0.35)
	w.Aggs = subset(r, Aggregates, 0.3)
	return w
}

// NewWorld draws a world of one to three trees (some with a wide layer of
// identical children) and up to two sharing providers.
func NewWorld(r *rand.Rand) []Prov {
	var ws []Prov
	n := 0
	id := func() string { n++; return fmt.Sprintf("p%02d", n) }
	roots := 1 + r.IntN(3)
	for i := 0; i < roots; i++ {
		root := newProv(r, id(), "", 0.5)
		if r.IntN(8) == 0 {
			root.Traits = append(root.Traits, "MISC_SHARES_VIA_AGGREGATE")
		}
		ws = append(ws, root)
		var addKids func(parent string, depth int)
		addKids = func(parent string, depth int) {
			if depth > 2 {
				return
			}
			kids := r.IntN(3)
			if depth == 1 && r.IntN(5) == 0 {
				// a wide, symmetric layer
				proto := newProv(r, "", parent, 0.6)
				for k := 0; k < 3+r.IntN(3); k++ {
					c := proto
					c.UUID = id()
					ws = append(ws, c)
				}
				return
			}
			for k := 0; k < kids; k++ {
				c := newProv(r, id(), parent, 0.5)
				ws = append(ws, c)
				addKids(c.UUID, depth+1)
			}
		}
		addKids(root.UUID, 1)
	}
	for i := 0; i < r.IntN(3); i++ {
		sp := newProv(r, id(), "", 0.6)
		sp.Traits = append(sp.Traits, "MISC_SHARES_VIA_AGGREGATE")
		if len(sp.Aggs) == 0 {
			sp.Aggs = []string{Pick(r, Aggregates)}
		}
		ws = append(ws, sp)
	}
	return ws
}

// NewGroup draws a request group with suffix over ws's names; a
// resourceless one asks for traits or aggregates only.
func NewGroup(r *rand.Rand, suffix string, ws []Prov, resourceless bool) Group {
	g := Group{Suffix: suffix}
	if !resourceless {
		cls := subset(r, Classes, 0.4)
		if len(cls) == 0 {
			cls = []string{Pick(r, Classes)}
		}
		for _, c := range cls {
			g.Resources = append(g.Resources, Resource{c, int64(1 + r.IntN(3))})
		}
		if r.IntN(30) == 0 {
			g.Resources = append(g.Resources, Resource{"CUSTOM_UNKNOWN", 1})
		}
	}
	if r.IntN(3) == 0 {
		g.Required = append(g.Required, []string{Pick(r, Traits[:4])})
		if r.IntN(2) == 0 {
			g.Required = append(g.Required, []string{Pick(r, Traits[:4]), Pick(r, Traits[:4])})
		}
	}
	if r.IntN(30) == 0 {
		g.Required = append(g.Required, []string{"CUSTOM_NOPE"})
	}
	if r.IntN(4) == 0 {
		g.Forbidden = []string{Pick(r, Traits[:4])}
	}
	if r.IntN(4) == 0 {
		g.MemberOf = [][]string{{Pick(r, Aggregates)}}
		if r.IntN(2) == 0 {
			g.MemberOf[0] = append(g.MemberOf[0], Pick(r, append([]string{"unknown-agg"}, Aggregates...)))
		}
		if r.IntN(3) == 0 {
			g.MemberOf = append(g.MemberOf, []string{Pick(r, Aggregates)})
		}
	}
	if r.IntN(5) == 0 {
		g.ForbiddenAggs = []string{Pick(r, Aggregates)}
	}
	if r.IntN(8) == 0 {
		g.InTree = Pick(r, ws).UUID
	}
	return g
}

// NewRequest draws a request over ws's names, with now and then a name
// the world lacks.
func NewRequest(r *rand.Rand, ws []Prov) Request {
	var req Request
	if r.IntN(5) != 0 {
		req.Groups = append(req.Groups, NewGroup(r, "", ws, false))
	}
	ng := r.IntN(4)
	if len(req.Groups) == 0 && ng == 0 {
		ng = 1
	}
	var sufs []string
	var resourceless []string
	for i := 1; i <= ng; i++ {
		suf := fmt.Sprintf("_%d", i)
		rl := r.IntN(6) == 0
		if rl {
			resourceless = append(resourceless, suf)
		}
		req.Groups = append(req.Groups, NewGroup(r, suf, ws, rl))
		sufs = append(sufs, suf)
	}
	r.Shuffle(len(req.Groups), func(i, j int) { req.Groups[i], req.Groups[j] = req.Groups[j], req.Groups[i] })
	req.GroupPolicy = Pick(r, []string{"none", "isolate", ""})
	if len(sufs) > 1 && r.IntN(2) == 0 || len(resourceless) > 0 {
		set := append(subset(r, sufs, 0.6), resourceless...)
		req.SameSubtree = append(req.SameSubtree, set)
	}
	if r.IntN(5) == 0 {
		req.RootRequired = []string{Pick(r, Traits[:4])}
	}
	if r.IntN(6) == 0 {
		req.RootForbidden = []string{Pick(r, Traits[:4])}
	}
	return req
}

// Request mirrors candidates.Request (Limit aside, which tests set).
type Request struct {
	Groups        []Group
	GroupPolicy   string
	RootRequired  []string
	RootForbidden []string
	SameSubtree   [][]string
}

// Group mirrors candidates.Group.
type Group struct {
	Suffix        string
	Resources     []Resource
	Required      [][]string
	Forbidden     []string
	MemberOf      [][]string
	ForbiddenAggs []string
	InTree        string
}

// Resource mirrors candidates.Resource.
type Resource struct {
	Class  string
	Amount int64
}
