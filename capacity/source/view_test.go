package source

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// TestCapacityReport: the route's body for one flavor by aggregate names
// each aggregate; an unknown flavor is a 404, a Source that never read
// Nova a 503.
func TestCapacityReport(t *testing.T) {
	snap := smallWorld()
	src := loaded(t, novaFile(t))
	body, err := src.CapacityReport(snap, "small", ByAggregate)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(body)
	var got ReportBody
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != 7 || len(got.Flavors) != 1 || got.Flavors[0].Cloud != 14 || got.Flavors[0].HeldBack["maintenance"] != 4 {
		t.Fatalf("body %s", raw)
	}
	aggs := got.Flavors[0].Aggregates
	if len(aggs) != 2 || aggs[0].Name != "gold" || aggs[0].Count != 4 || aggs[1].Name != "rack-a" || aggs[1].Zone != "az1" || aggs[1].Count != 12 {
		t.Errorf("aggregates %+v, want gold 4 then rack-a (az1) 12", aggs)
	}
	if got.Flavors[0].Hosts != nil || got.Flavors[0].Zones != nil {
		t.Errorf("by aggregate gave hosts or zones: %s", raw)
	}
	byHost, _ := src.CapacityReport(snap, "", ByHost)
	all := byHost.(ReportBody)
	if len(all.Flavors) != 3 || all.Flavors[2].Error == "" || len(all.Flavors[0].Hosts) == 0 || all.Flavors[0].Hosts[0].Name != "h1" {
		t.Errorf("all flavors by host: %+v", all)
	}
	for _, tc := range []struct {
		src    *Source
		flavor string
		status int
	}{{src, "m1.nope", http.StatusNotFound}, {New(Options{Nova: failingNova{}, Refresh: 1}), "", http.StatusServiceUnavailable}} {
		_, err := tc.src.CapacityReport(snap, tc.flavor, "")
		if e, ok := apierror.As(err); !ok || e.Status != tc.status {
			t.Errorf("flavor %q: %v, want %d", tc.flavor, err, tc.status)
		}
	}
}
