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
	// Hosts are the roots with Count > 0 or HeldBack > 0, by root name.
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
// independent: each is counted from the snapshot as it is.
func Count(in Input) Report {
	w := newWorld(in)
	rep := Report{Version: in.Snapshot.Version, Flavors: make([]Flavor, 0, len(in.Flavors))}
	for i := range in.Flavors {
		rep.Flavors = append(rep.Flavors, w.flavor(&in.Flavors[i]))
	}
	return rep
}

// flavor counts one flavor.
func (w *world) flavor(r *flavorreq.Result) Flavor {
	f := Flavor{Name: r.Flavor.Name, ID: r.Flavor.ID, Public: r.Flavor.Public, Notes: r.Notes}
	if r.Err != nil {
		f.Err = r.Err.Error()
		return f
	}
	p, note := w.compile(r.Request)
	if note != "" {
		f.Notes = append(slices.Clone(f.Notes), note)
	}
	clear(w.counts)
	clear(w.held)
	if p != nil {
		w.countFlat(p)
		w.countTrees(p)
	}
	w.report(&f)
	return f
}
