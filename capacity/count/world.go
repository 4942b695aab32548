package count

import (
	"cmp"
	"fmt"
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
	// inventory with reserved == total, "" for the others; heldAt is such
	// a root's place in a tally's held counts, -1 for the others.
	reason []string
	heldAt []int32
	nHeld  int
	// rootAggs lists the aggregates with a member root, ascending.
	rootAggs []int32
	// aggIDs[aggOff[i]:aggOff[i+1]] are root i's aggregates.
	aggIDs, aggOff []int32
	// hostsByName are the roots' report entries, counts left out.
	hostsByName []Host

	// columns (classes the flavors ask) and trait bits, by id; -1: none
	col      []int32
	colClass []int32 // class id by column
	bit      []int8
	ncol     int
	sim      *sim // countTrees' tree search
	// stale: since the engine's last answer, a provider started or
	// stopped fitting an amount of the unsuffixed group (see use).
	stale bool
	flips int // how many times that happened

	aggSum []int64 // by aggregate id
	claim  []allocation
}

func newWorld(in Input) *world {
	s := in.Snapshot
	n := len(s.Roots)
	w := &world{s: s, in: in, draft: s.NewDraft(), zone: make([]int32, n), reason: make([]string, n), heldAt: make([]int32, n),
		byName: make([]int32, n), aggOff: make([]int32, n+1),
		aggSum: make([]int64, len(s.Aggregates))}
	w.placeZones()
	inAgg := make([]bool, len(s.Aggregates))
	for i, r := range s.Roots {
		w.reason[i] = w.heldReason(r)
		w.heldAt[i] = -1
		if w.reason[i] != "" {
			w.heldAt[i] = int32(w.nHeld)
			w.nHeld++
		}
		for _, a := range s.Providers[r].Aggregates {
			inAgg[a] = true
		}
		w.aggIDs = append(w.aggIDs, s.Providers[r].Aggregates...)
		w.aggOff[i+1] = int32(len(w.aggIDs))
	}
	for a, ok := range inAgg {
		if ok {
			w.rootAggs = append(w.rootAggs, int32(a))
		}
	}
	if !in.NoHosts {
		w.sortByName()
		w.hostEntries()
	}
	return w
}

// sortByName orders the roots by name (then uuid) for the host lists,
// sorting a compact list: the providers are large and far apart.
func (w *world) sortByName() {
	s := w.s
	type named struct {
		name, uuid string
		i          int32
	}
	order := make([]named, len(s.Roots))
	for i, r := range s.Roots {
		order[i] = named{s.Providers[r].Name, s.Providers[r].UUID, int32(i)}
	}
	slices.SortFunc(order, func(a, b named) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.uuid, b.uuid)) })
	for k := range order {
		w.byName[k] = order[k].i
	}
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

// sums sums one flavor's counts into f and returns how many hosts its
// list has.
func (w *world) sums(f *Flavor, t *tally) int {
	s := w.s
	zoneSum := make([]int64, len(w.zones))
	f.HeldBack = map[string]int64{}
	clear(w.aggSum)
	hosts := 0
	for i, n := range t.counts {
		f.Cloud += n
		zoneSum[w.zone[i]] += n
		for _, a := range w.aggIDs[w.aggOff[i]:w.aggOff[i+1]] {
			w.aggSum[a] += n
		}
		held := w.heldOf(t, i)
		if held > 0 {
			f.HeldBack[w.reason[i]] += held
		}
		if n > 0 || held > 0 {
			hosts++
		}
	}
	f.Zones = make(map[string]int64, len(w.zones))
	for z, name := range w.zones {
		f.Zones[name] = zoneSum[z]
	}
	f.Aggregates = make(map[string]int64, len(w.rootAggs))
	for _, a := range w.rootAggs {
		f.Aggregates[s.Aggregates[a]] = w.aggSum[a]
	}
	return hosts
}

// hosts appends to out the entries of the roots with a count or a
// held-back count, by name.
func (w *world) hosts(out []Host, t *tally) []Host {
	for k, i := range w.byName {
		if n, held := t.counts[i], w.heldOf(t, int(i)); n > 0 || held > 0 {
			h := w.hostsByName[k]
			h.Count, h.HeldBack = n, held
			if held > 0 {
				h.Reason = w.reason[i]
			}
			out = append(out, h)
		}
	}
	return out
}

// hostEntries builds, in name order, each root's entry without counts;
// roots in the same aggregates share one list of their uuids (which no
// one may change).
func (w *world) hostEntries() {
	s := w.s
	shared := map[string][]string{}
	w.hostsByName = make([]Host, len(w.byName))
	for k, i := range w.byName {
		p := &s.Providers[s.Roots[i]]
		ids := w.aggIDs[w.aggOff[i]:w.aggOff[i+1]]
		key := fmt.Sprint(ids)
		names, ok := shared[key]
		if !ok {
			names = make([]string, len(ids))
			for j, a := range ids {
				names[j] = s.Aggregates[a]
			}
			slices.Sort(names)
			shared[key] = names
		}
		w.hostsByName[k] = Host{UUID: p.UUID, Name: p.Name, Zone: w.zones[w.zone[i]], Aggregates: names}
	}
}

// heldOf is root i's held-back count in t.
func (w *world) heldOf(t *tally, i int) int64 {
	if j := w.heldAt[i]; j >= 0 {
		return t.held[j]
	}
	return 0
}
