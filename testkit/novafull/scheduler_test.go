package novafull

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The scenario's computes: MediumFakeDriver's 8192 MB less what each
// reserves leaves room for 3, 2 and 1 servers of 1024 MB (with 512 MB to
// spare, so that a 2048 MB resize fits only where two small ones would).
func scenarioComputes() []Compute {
	return []Compute{{Host: "nf-a", ReservedMemoryMB: 8192 - 3584}, {Host: "nf-b", ReservedMemoryMB: 8192 - 2560}, {Host: "nf-c", ReservedMemoryMB: 8192 - 1536}}
}

// flavors are the scenario's flavors by name, MEMORY_MB each; 1 VCPU and
// 1 GB of disk all.
func flavorSizes() map[string]int {
	return map[string]int{"nf-small": 1024, "nf-medium": 2048, "nf-large": 3072}
}

// scenario is one run of the moves scenario against one Placement.
type scenario struct {
	t       *testing.T
	ctx     context.Context
	n       *Nova
	p       *placementtest.Server
	flavors map[string]string // name → id
	rp      map[string]string // host → provider uuid
	host    map[string]string // provider uuid → host
	record  []string          // the outcome, compared between Placements
	landing []string          // where each boot landed, logged only
}

// TestNovaScheduler_Moves runs Nova's scheduler, conductor and three fake
// computes against our Placement at 8.0.0 and 15.0.0 and the reference
// 8.0.0: boot until NoValidHost, resize with revert and with confirm, a
// cold migration, a resize with no room, and deleting everything. Each
// step's outcome (status, host, every consumer's allocations, every
// provider's usages) is checked against what the capacities allow, and
// must be the same for every Placement.
func TestNovaScheduler_Moves(t *testing.T) {
	n := nova.Get(t)
	ctx := context.Background()
	flavors := map[string]string{}
	for name, ram := range flavorSizes() {
		id, err := n.Flavor(ctx, name, 1, ram, 1)
		if err != nil {
			t.Fatal(err)
		}
		flavors[name] = id
	}
	placements := placementsUnderTest()
	outcomes := map[string][]string{}
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			start := time.Now()
			s := &scenario{t: t, ctx: ctx, n: n, p: pl.start(t), flavors: flavors}
			s.setUpComputes(scenarioComputes(), s.deleteServers)
			t.Logf("placement and computes up in %s", time.Since(start).Round(time.Millisecond))
			s.run()
			outcomes[pl.name] = s.record
			t.Logf("boots landed on: %s", strings.Join(s.landing, " "))
			t.Logf("%s: %d steps checked in %s", pl.name, len(s.record), time.Since(start).Round(time.Millisecond))
		})
	}
	sameAsReference(t, placements, outcomes)
}

// setUpComputes points Nova at the scenario's Placement, starts fresh
// computes and finds each one's provider; at the end cleanUp runs while
// the computes still run.
func (s *scenario) setUpComputes(computes []Compute, cleanUp func()) {
	t := s.t
	if err := s.n.UsePlacement(s.p.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.n.UsePlacement("") })
	t.Cleanup(s.n.StopComputes)
	if err := s.n.StartComputes(s.ctx, computes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanUp)
	s.rp, s.host = map[string]string{}, map[string]string{}
	for _, c := range computes {
		s.rp[c.Host] = s.providerNamed(c.Host)
		s.host[s.rp[c.Host]] = c.Host
	}
}

// providerNamed is the uuid of the one provider named name.
func (s *scenario) providerNamed(name string) string {
	var out struct {
		ResourceProviders []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	s.placement("/resource_providers?name="+name, &out)
	if len(out.ResourceProviders) != 1 {
		s.t.Fatalf("%d providers named %s, want 1", len(out.ResourceProviders), name)
	}
	return out.ResourceProviders[0].UUID
}

// deleteServers deletes every server while the computes still run, all
// at once (one by one would add seconds to each run).
func (s *scenario) deleteServers() {
	ids, err := s.n.ServerIDs(s.ctx)
	if err != nil {
		s.t.Error(err)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if err := s.n.Delete(s.ctx, id, 60*time.Second); err != nil {
				s.t.Error(err)
			}
		})
	}
	wg.Wait()
}

// placement GETs path from the scenario's Placement, wanting 200.
func (s *scenario) placement(path string, out any) {
	s.t.Helper()
	body := s.p.MustDo(s.t, http.StatusOK, "GET", path, "1.39", nil)
	if err := json.Unmarshal(body, out); err != nil {
		s.t.Fatalf("%s: %v: %s", path, err, body)
	}
}

// usages is every host's MEMORY_MB usage, as "nf-a=1024 nf-b=0 …".
func (s *scenario) usages() string {
	var parts []string
	for _, h := range slices.Sorted(maps.Keys(s.rp)) {
		var out struct {
			Usages map[string]int `json:"usages"`
		}
		s.placement("/resource_providers/"+s.rp[h]+"/usages", &out)
		parts = append(parts, fmt.Sprintf("%s=%d", h, out.Usages["MEMORY_MB"]))
	}
	return strings.Join(parts, " ")
}

// allocations is a consumer's allocations: provider → resource class →
// amount.
func (s *scenario) allocations(consumer string) map[string]map[string]int {
	var out struct {
		Allocations map[string]struct {
			Resources map[string]int `json:"resources"`
		} `json:"allocations"`
	}
	s.placement("/allocations/"+consumer, &out)
	all := map[string]map[string]int{}
	for rp, a := range out.Allocations {
		all[rp] = a.Resources
	}
	return all
}

// allocs is a consumer's allocations as "host:MEMORY_MB/VCPU/DISK_GB",
// sorted, or "none".
func (s *scenario) allocs(consumer string) string {
	var parts []string
	for rp, r := range s.allocations(consumer) {
		parts = append(parts, fmt.Sprintf("%s:%d/%d/%d", s.host[rp], r["MEMORY_MB"], r["VCPU"], r["DISK_GB"]))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// expect checks the step (as check does) and records it.
func (s *scenario) expect(step, consumer, allocs, usages string) {
	s.t.Helper()
	s.check(step, consumer, allocs, usages)
	s.record = append(s.record, fmt.Sprintf("%s: allocations %s; usages %s", step, allocs, usages))
}

// check waits until the consumer's allocations and the usages are as
// wanted (a compute finishes a move's bookkeeping just after the server's
// status changes), failing the scenario after 30 s.
func (s *scenario) check(step, consumer, allocs, usages string) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		gotA, gotU := s.allocs(consumer), s.usages()
		if gotA == allocs && gotU == usages {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: allocations %s, usages %s; want %s, %s\n%s", step, gotA, gotU, allocs, usages, s.n.Logs())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// wait waits for the server's status, failing the scenario otherwise.
func (s *scenario) wait(id string, want ...string) Server {
	s.t.Helper()
	srv, err := s.n.WaitServer(s.ctx, id, 120*time.Second, want...)
	if err != nil {
		s.t.Fatalf("%v\n%s", err, s.n.Logs())
	}
	return srv
}

func (s *scenario) action(id string, body map[string]any) {
	s.t.Helper()
	if err := s.n.Action(s.ctx, id, body); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scenario) delete(id string) {
	s.t.Helper()
	if err := s.n.Delete(s.ctx, id, 60*time.Second); err != nil {
		s.t.Fatal(err)
	}
}
