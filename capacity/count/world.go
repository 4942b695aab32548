package count

import (
	"cmp"
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// world is what one Count works out once for every flavor: each root's
// zone, name order and held-back state, and the scratch of one flavor.
// Roots are known by their position in Snapshot.Roots.
type world struct {
	s     *readmodel.Snapshot
	in    Input
	draft *readmodel.Draft

	zone   []int32  // by root: index into zones
	zones  []string // the zones of the roots, sorted
	byName []int32  // root positions by root name
	// reason is the held-back reason of a root whose tree has an
	// inventory with reserved == total, "" for the others.
	reason []string
	// rootAggs lists the aggregates with a member root, ascending.
	rootAggs []int32
	aggNames [][]string // by root, built on first use

	// one flavor's counts, by root
	counts, held []int64
	trees        []int32 // roots the engine counts, ascending
	aggSum       []int64 // by aggregate id
	claim        []allocation
}

func newWorld(in Input) *world {
	s := in.Snapshot
	n := len(s.Roots)
	w := &world{s: s, in: in, draft: s.NewDraft(), zone: make([]int32, n), reason: make([]string, n),
		byName: make([]int32, n), aggNames: make([][]string, n), counts: make([]int64, n), held: make([]int64, n),
		aggSum: make([]int64, len(s.Aggregates))}
	w.placeZones()
	inAgg := make([]bool, len(s.Aggregates))
	for i, r := range s.Roots {
		w.byName[i] = int32(i)
		w.reason[i] = w.heldReason(r)
		for _, a := range s.Providers[r].Aggregates {
			inAgg[a] = true
		}
	}
	for a, ok := range inAgg {
		if ok {
			w.rootAggs = append(w.rootAggs, int32(a))
		}
	}
	ps := s.Providers
	slices.SortFunc(w.byName, func(a, b int32) int {
		x, y := &ps[s.Roots[a]], &ps[s.Roots[b]]
		return cmp.Or(cmp.Compare(x.Name, y.Name), cmp.Compare(x.UUID, y.UUID))
	})
	return w
}

// placeZones puts each root in the zone of its aggregates (Nova lets a
// host be in one zone only; should its aggregates name several, the
// first by name), or in the default zone.
func (w *world) placeZones() {
	s := w.s
	ids := map[string]int32{}
	names := make([]string, len(s.Roots))
	for i, r := range s.Roots {
		z := ""
		for _, a := range s.Providers[r].Aggregates {
			if az := w.in.Aggregates[s.Aggregates[a]].Zone; az != "" && (z == "" || az < z) {
				z = az
			}
		}
		if z == "" {
			z = w.in.DefaultZone
		}
		names[i] = z
		if _, ok := ids[z]; !ok {
			ids[z] = 0
			w.zones = append(w.zones, z)
		}
	}
	slices.Sort(w.zones)
	for i, z := range w.zones {
		ids[z] = int32(i)
	}
	for i, z := range names {
		w.zone[i] = ids[z]
	}
}

// heldReason is the reason root r's tree is held back for: that of the
// first provider (in tree order) with an inventory whose reserved equals
// its total, "reserved" when the agent gave none; "" when none is.
func (w *world) heldReason(r int32) string {
	for _, p := range w.s.Providers[r].Tree {
		for _, inv := range w.s.Inventories(p) {
			if heldBack(&inv) {
				if why, ok := w.in.HeldBack[w.s.Providers[p].UUID]; ok && why != "" {
					return why
				}
				return ReasonReserved
			}
		}
	}
	return ""
}

// heldBack reports an inventory the agent holds back: all of it reserved.
func heldBack(inv *readmodel.SnapInventory) bool {
	return inv.Total > 0 && inv.Reserved == inv.Total
}

// report sums one flavor's counts into f.
func (w *world) report(f *Flavor) {
	s := w.s
	f.Zones = make(map[string]int64, len(w.zones))
	zoneSum := make([]int64, len(w.zones))
	f.HeldBack = map[string]int64{}
	clear(w.aggSum)
	hosts := 0
	for i, r := range s.Roots {
		n := w.counts[i]
		f.Cloud += n
		zoneSum[w.zone[i]] += n
		for _, a := range s.Providers[r].Aggregates {
			w.aggSum[a] += n
		}
		if w.held[i] > 0 {
			f.HeldBack[w.reason[i]] += w.held[i]
		}
		if n > 0 || w.held[i] > 0 {
			hosts++
		}
	}
	for z, name := range w.zones {
		f.Zones[name] = zoneSum[z]
	}
	f.Aggregates = make(map[string]int64, len(w.rootAggs))
	for _, a := range w.rootAggs {
		f.Aggregates[s.Aggregates[a]] = w.aggSum[a]
	}
	f.Hosts = make([]Host, 0, hosts)
	for _, i := range w.byName {
		if w.counts[i] > 0 || w.held[i] > 0 {
			f.Hosts = append(f.Hosts, w.host(i))
		}
	}
}

// host is root i's entry of a flavor's report.
func (w *world) host(i int32) Host {
	s := w.s
	p := &s.Providers[s.Roots[i]]
	if w.aggNames[i] == nil {
		names := make([]string, len(p.Aggregates))
		for k, a := range p.Aggregates {
			names[k] = s.Aggregates[a]
		}
		slices.Sort(names)
		w.aggNames[i] = names
	}
	h := Host{UUID: p.UUID, Name: p.Name, Zone: w.zones[w.zone[i]], Aggregates: w.aggNames[i], Count: w.counts[i], HeldBack: w.held[i]}
	if h.HeldBack > 0 {
		h.Reason = w.reason[i]
	}
	return h
}
