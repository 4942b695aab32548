package count_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// worldsEnv sets how many random clouds TestBruteForceThroughAPI builds
// (default 5).
const worldsEnv = "CAPACITY_WORLDS"

// TestBruteForceThroughAPI is the count's proof: random clouds served by
// our Placement over HTTP, every test flavor counted by claiming through
// the API until no candidate is left (bruteForce), and compared, per host
// and for the cloud, held back included, with Count on the server's
// snapshot of the same cloud before the claims.
func TestBruteForceThroughAPI(t *testing.T) {
	worlds := 5
	if v := os.Getenv(worldsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", worldsEnv, v)
		}
		worlds = n
	}
	results := flavorreq.TranslateAll(testFlavors(), flavorreq.Options{})
	diffs, claims, calls, nonzero := 0, int64(0), 0, 0
	start := time.Now()
	for seed := uint64(1); seed <= uint64(worlds); seed++ {
		c := newCloud(rand.New(rand.NewPCG(seed, 99)), 5)
		srv := placementtest.StartOurs(t, placementtest.Options{})
		a := newAPI(t, srv.URL, srv.Token)
		a.create(c)
		snap, err := srv.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rep := count.Count(count.Input{Snapshot: snap, Flavors: results, HeldBack: c.reasons(), DefaultZone: "nova"})
		names := c.names()
		for k, f := range rep.Flavors {
			if f.Err != "" {
				t.Fatalf("flavor %s: %s", f.Name, f.Err)
			}
			want, wantHeld := a.bruteForce(c, results[k].Request.Query(0))
			got, gotHeld := map[string]int64{}, map[string]int64{}
			for _, h := range f.Hosts {
				got[h.UUID], gotHeld[h.UUID] = h.Count, h.HeldBack
			}
			var cloud int64
			for u, n := range want {
				cloud += n
				claims += n + wantHeld[u]
				if n > 0 {
					nonzero++
				}
				if got[u] != n || gotHeld[u] != wantHeld[u] {
					diffs++
					t.Errorf("world %d flavor %s host %s: count %d held back %d, through the API %d held back %d",
						seed, f.Name, names[u], got[u], gotHeld[u], n, wantHeld[u])
				}
			}
			if f.Cloud != cloud {
				diffs++
				t.Errorf("world %d flavor %s: cloud %d, through the API %d", seed, f.Name, f.Cloud, cloud)
			}
		}
		calls += a.calls
	}
	t.Logf("%d worlds × %d flavors: %d differences (%d claims through the API, %d non-zero host counts, %d requests, %v)",
		worlds, len(results), diffs, claims, nonzero, calls, time.Since(start).Round(time.Millisecond))
}
