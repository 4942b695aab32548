package placementsrv

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
)

// BenchmarkScale measures the server at cloud sizes (scale_seed_test.go):
// start-up (load and read model), the scheduler's claim (candidates with
// limit 50, then PUT allocations), nova-compute's inventory report (GET
// then PUT inventories) and a plain flavor's candidates with limit 1000,
// each over HTTP on loopback. Sizes come from PLACEMENT_SCALE_HOSTS
// (default "1000,10000"; add 100000 for the full set: its first seeding
// takes a minute or two, then the file is reused):
//
//	PLACEMENT_SCALE_HOSTS=1000,10000,100000 go test ./placementsrv \
//	    -run '^$' -bench BenchmarkScale -benchtime 2s
//
// A claim and a report must cost the same at every size.
func BenchmarkScale(b *testing.B) {
	for _, hosts := range scaleSizes(b) {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			src := scaleDB(b, hosts)
			b.Run("startup", func(b *testing.B) { benchStartup(b, src) })
			ts := startServerFile(b, copyDB(b, src), nil, nil)
			b.Run("ac-simple", func(b *testing.B) {
				for b.Loop() {
					ts.must(b, 200, call{Method: "GET", Version: "1.39",
						Path: "/allocation_candidates?resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&limit=1000"})
				}
			})
			b.Run("claim", func(b *testing.B) { benchClaim(b, ts) })
			b.Run("report", func(b *testing.B) { benchReport(b, ts, hosts) })
		})
	}
}

func scaleSizes(b *testing.B) []int {
	spec := os.Getenv("PLACEMENT_SCALE_HOSTS")
	if spec == "" {
		spec = "1000,10000"
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("PLACEMENT_SCALE_HOSTS: %q is not a host count", f)
		}
		out = append(out, n)
	}
	return out
}

// copyDB copies the seeded file into the test's directory.
func copyDB(b *testing.B, src string) string {
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(b.TempDir(), "placement.db")
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return dst
}

// benchStartup opens the store (every record loaded) and builds the read
// model, as a restarted server does before its first candidates answer.
func benchStartup(b *testing.B, src string) {
	ctx := context.Background()
	path := copyDB(b, src)
	for b.Loop() {
		st, err := dbstore.OpenFile(ctx, path, dbstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// benchClaim asks for 50 candidates and claims a random one for a new
// consumer; the claims are deleted afterwards, untimed.
func benchClaim(b *testing.B, ts *testServer) {
	r := rand.New(rand.NewPCG(1, 2))
	var consumers []string
	for b.Loop() {
		res := ts.must(b, 200, call{Method: "GET", Version: "1.39",
			Path: "/allocation_candidates?resources=VCPU:1,MEMORY_MB:2048,DISK_GB:20&limit=50"})
		var ac struct {
			AllocationRequests []struct {
				Allocations json.RawMessage `json:"allocations"`
			} `json:"allocation_requests"`
		}
		if err := json.Unmarshal(res.Body, &ac); err != nil || len(ac.AllocationRequests) == 0 {
			b.Fatalf("no candidates (%v): %.200s", err, res.Body)
		}
		pick := ac.AllocationRequests[r.IntN(len(ac.AllocationRequests))]
		consumer := scaleUUID(0xc1a1, len(consumers))
		body := fmt.Sprintf(`{"allocations":%s,"project_id":"p","user_id":"u","consumer_generation":null,"consumer_type":"INSTANCE"}`, pick.Allocations)
		ts.must(b, 204, call{Method: "PUT", Version: "1.39", Path: "/allocations/" + consumer, Body: body})
		consumers = append(consumers, consumer)
	}
	b.StopTimer()
	for _, c := range consumers {
		ts.must(b, 204, call{Method: "DELETE", Version: "1.39", Path: "/allocations/" + c})
	}
}

// benchReport reads a random host's inventories and writes them back with
// another reserved amount, as nova-compute's resource tracker does.
func benchReport(b *testing.B, ts *testServer, hosts int) {
	r := rand.New(rand.NewPCG(3, 4))
	for b.Loop() {
		i := r.IntN(hosts)
		u := scaleUUID(kindRoot, i)
		if i%10 == 4 {
			u = scaleUUID(kindChild, i*4)
		}
		path := "/resource_providers/" + u + "/inventories"
		res := ts.must(b, 200, call{Method: "GET", Version: "1.39", Path: path})
		var doc struct {
			Generation  int64                     `json:"resource_provider_generation"`
			Inventories map[string]map[string]any `json:"inventories"`
		}
		if err := json.Unmarshal(res.Body, &doc); err != nil {
			b.Fatal(err)
		}
		for _, inv := range doc.Inventories {
			inv["reserved"] = r.IntN(2)
		}
		doc.Inventories["VCPU"]["reserved"] = r.IntN(3)
		body, err := json.Marshal(doc)
		if err != nil {
			b.Fatal(err)
		}
		ts.must(b, 200, call{Method: "PUT", Version: "1.39", Path: path, Body: string(body)})
	}
}
