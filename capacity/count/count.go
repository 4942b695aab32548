package count

import (
	"slices"

	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// ReasonReserved is the held-back reason when the agent gave none.
const ReasonReserved = "reserved"

// Aggregate is what Nova's host aggregate says about a Placement
// aggregate of the same uuid.
type Aggregate struct {
	Name     string
	Zone     string   // availability_zone metadata, "" if none
	Projects []string // filter_tenant_id* metadata values (tenant isolation)
}

// Input is everything one count reads.
type Input struct {
	Snapshot *readmodel.Snapshot
	// Flavors holds every flavor; one with Err is reported with its
	// reason, never dropped.
	Flavors []flavorreq.Result
	// Aggregates are Nova's, by aggregate uuid (may be empty).
	Aggregates map[string]Aggregate
	// DefaultZone is Nova's default_availability_zone, for hosts in no
	// zone ("nova").
	DefaultZone string
	// HeldBack maps a provider uuid to the agent's reason for holding it
	// back; a held-back provider not in it has reason "reserved".
	HeldBack map[string]string
	// NoHosts leaves every Flavor.Hosts empty (the sums are the same):
	// the host list is most of a count's cost and memory, which a scrape
	// without per-host series does not need.
	NoHosts bool
}

// Report is one count of every flavor.
type Report struct {
	Version uint64   // the snapshot's Version
	Flavors []Flavor // in input order
}

// Flavor is one flavor's count.
type Flavor struct {
	Name, ID string
	Public   bool
	Err      string   // translation refused: why (then no counts)
	Notes    []string // flavorreq notes (count is an upper bound when Nova's host filters check more)
	Cloud    int64
	// Zones maps an availability zone to the sum of its hosts.
	Zones map[string]int64
	// Aggregates maps an aggregate uuid to the sum of its member hosts.
	Aggregates map[string]int64
	// Hosts are the roots with Count > 0 or HeldBack > 0, by root name
	// (none with Input.NoHosts). Hosts in the same aggregates share their
	// Aggregates slice: read it, do not change it.
	Hosts []Host
	// HeldBack maps a reason to how many more would fit once the
	// held-back providers were released.
	HeldBack map[string]int64
}

// Host is one root provider's count.
type Host struct {
	UUID, Name string
	Zone       string
	Aggregates []string
	Count      int64
	HeldBack   int64
	Reason     string // the held-back reason, if HeldBack > 0
}

// Count counts every flavor of in on in.Snapshot. The flavors are
// independent: each is counted from the snapshot as it is. Count only
// reads in (its claims go on a private draft), so calls may run at once.
func Count(in Input) Report {
	w := newWorld(in)
	rep := Report{Version: in.Snapshot.Version, Flavors: make([]Flavor, len(in.Flavors))}
	tallies := make([]*tally, len(in.Flavors))
	for i := range in.Flavors {
		r := &in.Flavors[i]
		f := &rep.Flavors[i]
		*f = Flavor{Name: r.Flavor.Name, ID: r.Flavor.ID, Public: r.Flavor.Public, Notes: r.Notes}
		if r.Err != nil {
			f.Err = r.Err.Error()
			continue
		}
		p, note := w.compile(r.Request)
		if note != "" {
			f.Notes = append(slices.Clone(f.Notes), note)
		}
		if p != nil {
			tallies[i] = w.newTally(p)
		}
	}
	if w.track(tallies) {
		w.countRoots(tallies)
	} else {
		w.engineOnly(tallies)
	}
	none := w.newTally(nil)
	hosts := make([]int, len(tallies))
	total := 0
	for i, t := range tallies {
		if rep.Flavors[i].Err != "" {
			continue
		}
		if t == nil {
			t = none
		}
		w.countTrees(t)
		hosts[i] = w.sums(&rep.Flavors[i], t)
		total += hosts[i]
	}
	if in.NoHosts {
		return rep
	}
	// One allocation for every flavor's hosts.
	pool := make([]Host, total)
	for i, t := range tallies {
		if rep.Flavors[i].Err == "" {
			if t == nil {
				t = none
			}
			rep.Flavors[i].Hosts = w.hosts(pool[:0:hosts[i]], t)
			pool = pool[hosts[i]:]
		}
	}
	return rep
}

// tally is one flavor's counts, by root position.
type tally struct {
	p      *plan
	counts []int64 // by root
	held   []int64 // by world.heldAt
	// steps are the roots countTrees takes, in order.
	steps []step
}

// step is a root for countTrees: one the engine counts, one the tree
// search counts with the sharing providers it draws from (shared), or
// (replay) one counted already whose claims the roots after it must see.
type step struct {
	i              int32
	replay, shared bool
}

func (w *world) newTally(p *plan) *tally {
	n := len(w.s.Roots)
	return &tally{p: p, counts: make([]int64, n), held: make([]int64, w.nHeld)}
}

// engineOnly lists every root for the engine (flavors naming more than
// 64 classes or traits).
func (w *world) engineOnly(tallies []*tally) {
	for _, t := range tallies {
		if t == nil {
			continue
		}
		for i, r := range w.s.Roots {
			if root := &w.s.Providers[r]; hasAll(root, t.p.rootReq) && !root.HasAnyTrait(t.p.rootForb) {
				t.steps = append(t.steps, step{i: int32(i)})
			}
		}
	}
}

func hasAll(p *readmodel.SnapProvider, traits []int32) bool {
	for _, t := range traits {
		if !p.HasTrait(t) {
			return false
		}
	}
	return true
}
