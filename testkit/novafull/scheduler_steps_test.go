package novafull

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// run is the scenario's steps; each expected outcome follows from the
// capacities alone (scenarioComputes), whatever the weighers' ties.
func (s *scenario) run() {
	onHost := s.bootUntilFull()
	// Keep one server per host: a, b and c each run one.
	for _, id := range append(onHost["nf-a"][1:], onHost["nf-b"][1:]...) {
		s.delete(id)
	}
	s.expect("kept one per host", onHost["nf-a"][0], "nf-a:1024/1/1", "nf-a=1024 nf-b=1024 nf-c=1024")
	x, y, z := onHost["nf-c"][0], onHost["nf-b"][0], onHost["nf-a"][0]

	// Resize c's server to 2048 MB: only a has room. Revert.
	s.resize(x, "nf-medium", "nf-a")
	s.expect("resize c→a, migration holds c", s.migration(x), "nf-c:1024/1/1", "nf-a=3072 nf-b=1024 nf-c=1024")
	s.action(x, map[string]any{"revertResize": nil})
	s.landed(x, "ACTIVE", "nf-c", "nf-small")
	s.expect("revert: back on c", x, "nf-c:1024/1/1", "nf-a=1024 nf-b=1024 nf-c=1024")

	// Again, and confirm.
	s.resize(x, "nf-medium", "nf-a")
	mig := s.migration(x)
	s.action(x, map[string]any{"confirmResize": nil})
	s.landed(x, "ACTIVE", "nf-a", "nf-medium")
	s.expect("confirm: on a", x, "nf-a:2048/1/1", "nf-a=3072 nf-b=1024 nf-c=0")
	s.expect("confirm: migration released", mig, "none", "nf-a=3072 nf-b=1024 nf-c=0")

	// Cold migration of b's server: a has 512 MB left, so c.
	s.action(y, map[string]any{"migrate": nil})
	s.landed(y, "VERIFY_RESIZE", "nf-c", "nf-small")
	mig = s.migration(y)
	s.expect("migrate b→c, migration holds b", mig, "nf-b:1024/1/1", "nf-a=3072 nf-b=1024 nf-c=1024")
	s.action(y, map[string]any{"confirmResize": nil})
	s.landed(y, "ACTIVE", "nf-c", "nf-small")
	s.expect("migrate confirmed: on c", y, "nf-c:1024/1/1", "nf-a=3072 nf-b=0 nf-c=1024")
	s.expect("migrate confirmed: migration released", mig, "none", "nf-a=3072 nf-b=0 nf-c=1024")

	// A resize to 3072 MB has no room anywhere: a's small server stays.
	s.action(z, map[string]any{"resize": map[string]any{"flavorRef": s.flavors["nf-large"]}})
	s.landed(z, "ACTIVE", "nf-a", "nf-small")
	s.expect("resize with no room: unchanged", z, "nf-a:1024/1/1", "nf-a=3072 nf-b=0 nf-c=1024")

	s.deleteAll(map[string]string{"c's server": x, "b's server": y, "a's server": z, "the last migration": mig})
}

// bootUntilFull boots servers of 1024 MB one by one until one fails with
// NoValidHost: 6 fit, 3 on a, 2 on b and 1 on c. It returns the servers
// by host, in boot order.
func (s *scenario) bootUntilFull() map[string][]string {
	onHost := map[string][]string{}
	for i := 1; i <= 7; i++ {
		id, err := s.n.Boot(s.ctx, fmt.Sprintf("nf-%d", i), s.flavors["nf-small"])
		if err != nil {
			s.t.Fatal(err)
		}
		srv := s.wait(id, "ACTIVE", "ERROR")
		if srv.Status == "ERROR" {
			if !srv.NoValidHost() {
				s.t.Fatalf("boot %d: ERROR with fault %q, want No valid host\n%s", i, srv.FaultMessage(), s.n.Logs())
			}
			s.expect(fmt.Sprintf("boot %d: NoValidHost", i), id, "none", "nf-a=3072 nf-b=2048 nf-c=1024")
			s.delete(id)
			break
		}
		onHost[srv.Host] = append(onHost[srv.Host], id)
		s.landing = append(s.landing, srv.Host)
		// Where each boot lands among hosts with equal room is the
		// weighers' tie-break: logged, not compared.
		s.check(fmt.Sprintf("boot %d", i), id, srv.Host+":1024/1/1", s.usages())
		s.record = append(s.record, fmt.Sprintf("boot %d: ACTIVE", i))
	}
	counts := fmt.Sprintf("%d/%d/%d", len(onHost["nf-a"]), len(onHost["nf-b"]), len(onHost["nf-c"]))
	if counts != "3/2/1" {
		s.t.Fatalf("servers per host a/b/c %s, want 3/2/1 (landed on %v)", counts, s.landing)
	}
	s.record = append(s.record, "boot until full: per host "+counts)
	return onHost
}

// resize asks for flavor and waits for VERIFY_RESIZE on dest, where the
// server then holds the new flavor.
func (s *scenario) resize(id, flavor, dest string) {
	s.t.Helper()
	s.action(id, map[string]any{"resize": map[string]any{"flavorRef": s.flavors[flavor]}})
	s.landed(id, "VERIFY_RESIZE", dest, flavor)
	s.check("resize to "+flavor, id, fmt.Sprintf("%s:%d/1/1", dest, flavorSizes()[flavor]), s.usages())
}

// landed waits for status and checks the server's host and flavor.
func (s *scenario) landed(id, status, host, flavor string) {
	s.t.Helper()
	srv := s.wait(id, status)
	if srv.Host != host || srv.Flavor.Name != flavor {
		s.t.Fatalf("server %s %s on %s with %s, want on %s with %s", id, status, srv.Host, srv.Flavor.Name, host, flavor)
	}
	s.record = append(s.record, fmt.Sprintf("%s on %s with %s", status, host, flavor))
}

// migration is the uuid of the server's latest migration.
func (s *scenario) migration(id string) string {
	s.t.Helper()
	var out struct {
		Migrations []struct {
			ID   int    `json:"id"`
			UUID string `json:"uuid"`
		} `json:"migrations"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/os-migrations?instance_uuid="+id, nil, &out); err != nil {
		s.t.Fatal(err)
	}
	if len(out.Migrations) == 0 {
		s.t.Fatalf("server %s has no migration", id)
	}
	latest := slices.MaxFunc(out.Migrations, func(a, b struct {
		ID   int    `json:"id"`
		UUID string `json:"uuid"`
	}) int {
		return a.ID - b.ID
	})
	return latest.UUID
}

// deleteAll deletes every server and checks that nothing is left in
// Placement: no allocation for the consumers named, zero usage on every
// provider and for the project.
func (s *scenario) deleteAll(consumers map[string]string) {
	s.t.Helper()
	ids, err := s.n.ServerIDs(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, id := range ids {
		s.delete(id)
	}
	for _, name := range slices.Sorted(maps.Keys(consumers)) {
		s.expect("deleted: "+name, consumers[name], "none", "nf-a=0 nf-b=0 nf-c=0")
	}
	s.expectProjectUnused()
}

// expectProjectUnused checks that the project uses nothing any more, in
// 1.9's form of its usages (1.38 groups them by consumer type), and
// records them.
func (s *scenario) expectProjectUnused() {
	s.t.Helper()
	var project struct {
		Usages map[string]int `json:"usages"`
	}
	body := s.p.MustDo(s.t, http.StatusOK, "GET", "/usages?project_id="+Project, "1.9", nil)
	if err := json.Unmarshal(body, &project); err != nil {
		s.t.Fatalf("usages: %v: %s", err, body)
	}
	for rc, used := range project.Usages {
		if used != 0 {
			s.t.Errorf("project %s still uses %d %s", Project, used, rc)
		}
	}
	s.record = append(s.record, fmt.Sprintf("deleted all: project usages %v", project.Usages))
}
