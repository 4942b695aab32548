package source

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// The breakdowns of GET /_placement-syncd/capacity's by parameter.
const (
	ByHost      = "host"
	ByAggregate = "aggregate"
	ByZone      = "zone"
)

// ReportBody is the answer of GET /_placement-syncd/capacity.
type ReportBody struct {
	// Version is the read model's write counter the count reflects.
	Version uint64       `json:"version"`
	By      string       `json:"by,omitempty"`
	Flavors []FlavorBody `json:"flavors"`
}

// FlavorBody is one flavor's count; the breakdown asked for is filled.
type FlavorBody struct {
	Name       string           `json:"name"`
	ID         string           `json:"id"`
	Public     bool             `json:"public"`
	Error      string           `json:"error,omitempty"`
	Notes      []string         `json:"notes,omitempty"`
	Cloud      int64            `json:"cloud"`
	HeldBack   map[string]int64 `json:"held_back"`
	Zones      map[string]int64 `json:"zones,omitempty"`
	Aggregates []AggregateBody  `json:"aggregates,omitempty"`
	Hosts      []HostBody       `json:"hosts,omitempty"`
}

// HostBody is one host's (root provider's) count.
type HostBody struct {
	UUID       string   `json:"uuid"`
	Name       string   `json:"name"`
	Zone       string   `json:"zone"`
	Aggregates []string `json:"aggregates"`
	Count      int64    `json:"count"`
	HeldBack   int64    `json:"held_back"`
	Reason     string   `json:"reason,omitempty"`
}

// AggregateBody is one aggregate's sum, named as Nova names it.
type AggregateBody struct {
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	Zone  string `json:"zone"`
	Count int64  `json:"count"`
}

// CapacityReport answers the capacity route for snap: every flavor, or
// the one named flavor ("" for all), with the breakdown by asks for
// (one of the By* constants, or "" for the cloud's total only). It fails
// with Placement's errors: 404 for an unknown flavor, 503 before Nova's
// flavors were first read.
func (s *Source) CapacityReport(snap *readmodel.Snapshot, flavor, by string) (any, error) {
	in, ok := s.Input(snap)
	if !ok {
		return nil, apierror.Errorf(http.StatusServiceUnavailable, "Capacity by flavor has not read Nova's flavors and aggregates yet.")
	}
	if flavor != "" {
		i := slices.IndexFunc(in.Flavors, func(r flavorreq.Result) bool { return r.Flavor.Name == flavor })
		if i < 0 {
			return nil, apierror.NotFound("No flavor named %s.", flavor)
		}
		in.Flavors = in.Flavors[i : i+1]
	}
	rep := count.Count(in)
	body := ReportBody{Version: rep.Version, By: by, Flavors: make([]FlavorBody, 0, len(rep.Flavors))}
	for _, f := range rep.Flavors {
		body.Flavors = append(body.Flavors, flavorBody(f, by, in.Aggregates))
	}
	return body, nil
}

// flavorBody shapes one flavor for the breakdown by.
func flavorBody(f count.Flavor, by string, aggs map[string]count.Aggregate) FlavorBody {
	fb := FlavorBody{Name: f.Name, ID: f.ID, Public: f.Public, Error: f.Err, Notes: f.Notes, Cloud: f.Cloud, HeldBack: f.HeldBack}
	if fb.HeldBack == nil {
		fb.HeldBack = map[string]int64{}
	}
	switch by {
	case ByZone:
		fb.Zones = f.Zones
	case ByHost:
		for _, h := range f.Hosts {
			fb.Hosts = append(fb.Hosts, HostBody{UUID: h.UUID, Name: h.Name, Zone: h.Zone, Aggregates: h.Aggregates,
				Count: h.Count, HeldBack: h.HeldBack, Reason: h.Reason})
		}
	case ByAggregate:
		for u, n := range f.Aggregates {
			a := aggs[u]
			fb.Aggregates = append(fb.Aggregates, AggregateBody{UUID: u, Name: a.Name, Zone: a.Zone, Count: n})
		}
		slices.SortFunc(fb.Aggregates, func(a, b AggregateBody) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.UUID, b.UUID))
		})
	}
	return fb
}
