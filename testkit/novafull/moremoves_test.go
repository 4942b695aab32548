package novafull

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The more-moves scenario's computes: MediumFakeDriver's 8192 MB less
// what each reserves leaves room for two servers of 1024 MB on mm-a and
// one on mm-b and mm-c (each with 512 MB to spare).
func moveComputes() []Compute {
	return []Compute{{Host: "mm-a", ReservedMemoryMB: 8192 - 2560}, {Host: "mm-b", ReservedMemoryMB: 8192 - 1536}, {Host: "mm-c", ReservedMemoryMB: 8192 - 1536}}
}

// moveScenario is one run of the more-moves scenario against one
// Placement.
type moveScenario struct {
	*scenario
	flavor string
	group  string // the anti-affinity server group, once made
}

// placementUnderTest is one Placement a scenario runs against.
type placementUnderTest struct {
	name  string
	start func(t *testing.T) *placementtest.Server
}

// placementsUnderTest are the Placements each scenario runs against: ours
// at both releases and the reference, last, whose outcome is the one
// wanted.
func placementsUnderTest() []placementUnderTest {
	return []placementUnderTest{
		{"ours-8.0.0", func(t *testing.T) *placementtest.Server {
			return placementtest.StartOurs(t, placementtest.Options{Release: release.V8})
		}},
		{"ours-15.0.0", func(t *testing.T) *placementtest.Server {
			return placementtest.StartOurs(t, placementtest.Options{Release: release.V15})
		}},
		{"reference-8.0.0", func(t *testing.T) *placementtest.Server {
			return placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V8})
		}},
	}
}

// sameAsReference fails the test for each Placement whose recorded
// outcomes differ from the reference's (the last of placements).
func sameAsReference(t *testing.T, placements []placementUnderTest, outcomes map[string][]string) {
	t.Helper()
	want := outcomes[placements[len(placements)-1].name]
	for name, got := range outcomes {
		if !slices.Equal(got, want) {
			t.Errorf("%s's outcome differs from the reference's:\n%s\nreference:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestNovaScheduler_MoreMoves runs the moves that write allocations in
// other ways than a boot or a resize, through Nova's scheduler,
// conductor and three fake computes, against our Placement at 8.0.0 and
// 15.0.0 and the reference 8.0.0: live migration to a named host and to
// one the scheduler chooses, evacuation from a compute forced down (and
// the source's allocation cleaned when it comes back), shelve offload
// and unshelve, rebuild with the same and a new image, and an
// anti-affinity server group running out of hosts. Each step's outcome
// (status, host, every consumer's allocations, every provider's usages)
// follows from the capacities, and must be the same for every Placement.
func TestNovaScheduler_MoreMoves(t *testing.T) {
	n := nova.Get(t)
	ctx := t.Context()
	flavor, err := n.Flavor(ctx, "mm-small", 1, 1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	placements := placementsUnderTest()
	outcomes := map[string][]string{}
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			start := time.Now()
			s := &moveScenario{scenario: &scenario{t: t, ctx: ctx, n: n, p: pl.start(t)}, flavor: flavor}
			s.setUpComputes(moveComputes(), s.cleanUp)
			t.Logf("placement and computes up in %s", time.Since(start).Round(time.Millisecond))
			s.run()
			outcomes[pl.name] = s.record
			t.Logf("%s: %d outcomes checked in %s", pl.name, len(s.record), time.Since(start).Round(time.Millisecond))
		})
	}
	sameAsReference(t, placements, outcomes)
}

// cleanUp deletes what a failed run left: servers (all at once), the
// group, and a compute left forced down.
func (s *moveScenario) cleanUp() {
	s.deleteServers()
	if s.group != "" {
		_, _, _ = s.n.Do(s.ctx, http.MethodDelete, "/os-server-groups/"+s.group, nil, nil)
	}
	for _, c := range moveComputes() {
		if svc, down := s.computeService(c.Host); down {
			_, _, _ = s.n.Do(s.ctx, http.MethodPut, "/os-services/"+svc, map[string]any{"forced_down": false}, nil)
		}
	}
}

// boot asks for a server of the scenario's flavor with extra attributes
// of the server (such as "host", 2.74) and scheduler hints, and waits
// until it is ACTIVE or in ERROR.
func (s *moveScenario) boot(name string, extra, hints map[string]any) Server {
	s.t.Helper()
	srv := map[string]any{"name": name, "flavorRef": s.flavor, "imageRef": ImageID, "networks": "none"}
	for k, v := range extra {
		srv[k] = v
	}
	body := map[string]any{"server": srv}
	if hints != nil {
		body["os:scheduler_hints"] = hints
	}
	var out struct {
		Server struct {
			ID string `json:"id"`
		} `json:"server"`
	}
	if err := s.n.Call(s.ctx, http.StatusAccepted, http.MethodPost, "/servers", body, &out); err != nil {
		s.t.Fatal(err)
	}
	return s.wait(out.Server.ID, "ACTIVE", "ERROR")
}

// bootOn boots a server on host (Nova still asks Placement, for that
// host's provider) and checks its allocation.
func (s *moveScenario) bootOn(name, host string) string {
	s.t.Helper()
	srv := s.boot(name, map[string]any{"host": host}, nil)
	if srv.Status != "ACTIVE" || srv.Host != host {
		s.t.Fatalf("boot %s on %s: %s on %q (%+v)\n%s", name, host, srv.Status, srv.Host, srv.Fault, s.n.Logs())
	}
	s.expect(fmt.Sprintf("boot %s on %s", name, host), srv.ID, host+":1024/1/1", s.usages())
	return srv.ID
}

// noValidHost checks that a boot ended in ERROR for want of a host,
// holding nothing.
func (s *moveScenario) noValidHost(step string, srv Server, usages string) {
	s.t.Helper()
	if srv.Status != "ERROR" || !srv.NoValidHost() {
		s.t.Fatalf("%s: %s on %q with fault %q, want ERROR with No valid host\n%s", step, srv.Status, srv.Host, srv.FaultMessage(), s.n.Logs())
	}
	s.expect(step+": NoValidHost", srv.ID, "none", usages)
}

// migrationOf is the server's latest migration: uuid, type and status.
func (s *moveScenario) migrationOf(id string) (uuid, kind, status string) {
	s.t.Helper()
	var out struct {
		Migrations []struct {
			ID     int    `json:"id"`
			UUID   string `json:"uuid"`
			Type   string `json:"migration_type"`
			Status string `json:"status"`
		} `json:"migrations"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/os-migrations?instance_uuid="+id, nil, &out); err != nil {
		s.t.Fatal(err)
	}
	if len(out.Migrations) == 0 {
		s.t.Fatalf("server %s has no migration", id)
	}
	m := slices.MaxFunc(out.Migrations, func(a, b struct {
		ID     int    `json:"id"`
		UUID   string `json:"uuid"`
		Type   string `json:"migration_type"`
		Status string `json:"status"`
	}) int {
		return a.ID - b.ID
	})
	return m.UUID, m.Type, m.Status
}

// computeService is the id of host's nova-compute service and whether
// it is forced down.
func (s *moveScenario) computeService(host string) (string, bool) {
	s.t.Helper()
	var out struct {
		Services []struct {
			ID         string `json:"id"`
			ForcedDown bool   `json:"forced_down"`
		} `json:"services"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/os-services?binary=nova-compute&host="+host, nil, &out); err != nil || len(out.Services) != 1 {
		s.t.Fatalf("nova-compute service of %s: %v %+v", host, err, out.Services)
	}
	return out.Services[0].ID, out.Services[0].ForcedDown
}

// settle is check with a longer limit, for what a compute does as it
// starts; it records the step.
func (s *moveScenario) settle(step, consumer, allocs, usages string, limit time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		gotA, gotU := s.allocs(consumer), s.usages()
		if gotA == allocs && gotU == usages {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: allocations %s, usages %s after %s; want %s, %s\n%s", step, gotA, gotU, limit, allocs, usages, s.n.Logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.record = append(s.record, fmt.Sprintf("%s: allocations %s; usages %s", step, allocs, usages))
}
