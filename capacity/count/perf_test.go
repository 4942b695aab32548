package count_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// perfHostsEnv sets TestPerfOsCapacity's cloud size (default 1000).
const perfHostsEnv = "CAPACITY_PERF_HOSTS"

// createFleet builds a fleet cloud through the API, three requests a
// flat host: the provider, its inventories, its usage as one consumer.
func (a *api) createFleet(c *cloud) {
	for i := range c.provs {
		p := &c.provs[i]
		a.createProvider(p)
		invs := map[string]any{}
		used := map[string]int64{}
		for _, x := range p.invs {
			invs[x.class] = invDoc(x, false)
			if x.used > 0 {
				used[x.class] = x.used
			}
		}
		a.must(http.MethodPut, "/resource_providers/"+p.uuid+"/inventories", "1.26",
			map[string]any{"resource_provider_generation": 0, "inventories": invs}, http.StatusOK)
		if len(used) > 0 {
			a.claim(map[string]map[string]int64{p.uuid: used})
		}
	}
}

// osCapacityScrape is the requests os-capacity makes per scrape once its
// aggregate cache is warm: the providers, one unlimited GET
// /allocation_candidates per flavor, and each provider's usages and
// inventories.
func osCapacityScrape(a *api, flavors []novaclient.Flavor) time.Duration {
	start := time.Now()
	var list struct {
		Providers []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	a.decode(a.must(http.MethodGet, "/resource_providers", "1.19", nil, http.StatusOK), &list)
	for _, f := range flavors {
		osCapacity(a, f)
	}
	for _, p := range list.Providers {
		a.must(http.MethodGet, "/resource_providers/"+p.UUID+"/usages", "1.19", nil, http.StatusOK)
		a.must(http.MethodGet, "/resource_providers/"+p.UUID+"/inventories", "1.19", nil, http.StatusOK)
	}
	return time.Since(start)
}

// TestPerfOsCapacity (PERF=1) times, in one run on one cloud, os-capacity's
// requests for one scrape against upstream Placement 15.0.0 and against
// ours, and Count on our server's snapshot of the same cloud.
func TestPerfOsCapacity(t *testing.T) {
	if os.Getenv("PERF") != "1" {
		t.Skip("PERF=1 runs the timing against upstream Placement 15.0.0")
	}
	hosts := 1000
	if v := os.Getenv(perfHostsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", perfHostsEnv, v)
		}
		hosts = n
	}
	c, _ := fleet(hosts)
	var flavors []novaclient.Flavor
	for _, r := range fleetFlavors()[:10] {
		flavors = append(flavors, r.Flavor)
	}
	ref := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V15})
	ours := placementtest.StartOurs(t, placementtest.Options{})
	refAPI := newAPI(t, ref.URL, ref.Token)
	refAPI.c.Transport = &http.Transport{DisableKeepAlives: true} // uWSGI answers once per connection
	ourAPI := newAPI(t, ours.URL, ours.Token)
	for _, a := range []*api{refAPI, ourAPI} {
		start := time.Now()
		a.createFleet(c)
		t.Logf("%s: %d providers created in %v", a.url, len(c.provs), time.Since(start).Round(time.Millisecond))
	}
	refTime := osCapacityScrape(refAPI, flavors)
	ourTime := osCapacityScrape(ourAPI, flavors)
	snap, err := ours.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in := count.Input{Snapshot: snap, Flavors: flavorreq.TranslateAll(flavors, flavorreq.Options{}), DefaultZone: "nova"}
	const runs = 20
	start := time.Now()
	for range runs {
		count.Count(in)
	}
	countTime := time.Since(start) / runs
	t.Logf("%d hosts (%d providers), %d flavors, one scrape: os-capacity's requests against Placement 15.0.0 %v, against ours %v; Count %v",
		hosts, len(c.provs), len(flavors), refTime.Round(time.Millisecond), ourTime.Round(time.Millisecond), countTime.Round(time.Microsecond))
}
