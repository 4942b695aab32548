package placementsrv

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

const capacityRoute = "/_placement-syncd/capacity"

// askedReporter stands in for capacity/source, which reads Nova and so
// is out of the server's reach (and its tests'): it answers what it was
// asked, over the snapshot it was given. The daemon's tests run the real
// one through this route.
type askedReporter struct {
	mu    sync.Mutex
	asked []string
}

func (r *askedReporter) CapacityReport(snap *readmodel.Snapshot, flavor, by string) (any, error) {
	r.mu.Lock()
	r.asked = append(r.asked, flavor+"|"+by)
	r.mu.Unlock()
	return map[string]any{"version": snap.Version, "flavor": flavor, "by": by, "providers": len(snap.Providers)}, nil
}

// TestCapacityRoute_Query: flavor and by reach the reporter (az read as
// zone); anything else is Placement's 400, before the reporter is asked.
func TestCapacityRoute_Query(t *testing.T) {
	rep := &askedReporter{}
	ts := startServerWith(t, func(o *Options) { o.Capacity = rep })
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.20", Body: `{"name": "cn1"}`})
	r := ts.must(t, 200, call{Method: "GET", Path: capacityRoute + "?flavor=m1.small&by=az"})
	var body struct {
		Flavor, By string
		Providers  int
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Flavor != "m1.small" || body.By != "zone" || body.Providers != 1 {
		t.Errorf("answer %s (%v), want m1.small by zone over 1 provider", r.Body, err)
	}
	ts.must(t, 200, call{Method: "GET", Path: capacityRoute})
	for _, q := range []string{"?by=rack", "?by=", "?flavor=", "?flavor=a&flavor=b", "?resources=VCPU:1", "?by=host&by=zone", "?%zz"} {
		r := ts.must(t, 400, call{Method: "GET", Path: capacityRoute + q, Version: "1.39"})
		if d, code := errorDetail(t, r); !strings.Contains(d, "Invalid query string parameters: ") || code != "placement.undefined_code" {
			t.Errorf("%s: %s %q, want Placement's bad query", q, code, d)
		}
	}
	if strings.Join(rep.asked, ",") != "m1.small|zone,|" {
		t.Errorf("reporter asked %q, want the two good queries only", rep.asked)
	}
}

// TestCapacityRoute_Policy: admins only by default in both releases,
// even for a service or a system reader; 403 names the rule.
func TestCapacityRoute_Policy(t *testing.T) {
	for _, rel := range []release.Release{release.V8, release.V15} {
		ts := startServerWith(t, func(o *Options) { o.Release, o.Capacity = rel, &askedReporter{} })
		for _, h := range []map[string]string{
			{"X-Auth-Token": "user"},
			{"X-Auth-Token": "svc:p1", "X-Roles": "service"},
			{"X-Auth-Token": "reader", "X-Roles": "reader", "OpenStack-System-Scope": "all"},
		} {
			r := ts.must(t, 403, call{Method: "GET", Path: capacityRoute, Headers: h})
			if !strings.Contains(string(r.Body), policy.Capacity) {
				t.Errorf("%s %v: 403 without the rule's name: %s", rel, h, r.Body)
			}
		}
		ts.must(t, 200, call{Method: "GET", Path: capacityRoute, Headers: map[string]string{"X-Auth-Token": "admin"}})
	}
}

// TestCapacityRoute_Off: without a reporter the route is a 404 that says
// why, still behind the policy.
func TestCapacityRoute_Off(t *testing.T) {
	ts := startServerWith(t, nil)
	r := ts.must(t, 404, call{Method: "GET", Path: capacityRoute + "?by=host"})
	if d, _ := errorDetail(t, r); !strings.Contains(d, "capacity.enabled") {
		t.Errorf("detail %q does not name capacity.enabled", d)
	}
	ts.must(t, 403, call{Method: "GET", Path: capacityRoute, Headers: map[string]string{"X-Auth-Token": "user"}})
}
