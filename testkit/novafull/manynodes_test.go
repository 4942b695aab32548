package novafull

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The many-nodes scenario's ironic compute host, zone and resource
// class: two bare-metal nodes of one class, both compute nodes of one
// host.
const (
	mnHost = "mn-ironic"
	mnZone = "mn-az"
	mnRC   = "CUSTOM_BAREMETAL_MANY"
)

// mnRun is one Placement the scenario runs against, with or without the
// reconciler's aggregate sync after Nova's own mirroring.
type mnRun struct {
	name      string
	start     func(t *testing.T) *placementtest.Server
	reconcile bool
}

// TestNovaScheduler_ManyNodes shows the case Nova's own aggregate
// mirroring gets wrong: a host with many compute nodes (one nova-compute
// running Nova's ironic driver, two bare-metal nodes of one class). A
// host aggregate with an availability zone made through Nova's API
// reaches Placement, through nova-api, for the host's first compute node
// only (Nova 26.2's add_host_to_aggregate mirrors nodes[0]), so boots
// into the zone find one node: the second is NoValidHost although the
// other node is free, and Nova's own repair (nova-manage placement
// sync_aggregates) refuses such a host. The reference 8.0.0 and ours
// without the reconciler do exactly that; with the reconciler's aggregate sync run
// after Nova's mirroring, both nodes are in the aggregate and both boots
// land.
func TestNovaScheduler_ManyNodes(t *testing.T) {
	n := nova.Get(t)
	began := time.Now()
	ir := ironictest.Start(t, ironictest.Options{})
	nodes := ir.EnrollAvailable(t, 2, ironictest.NodeSpec{Name: "mn", ResourceClass: "baremetal-many"})
	flavor, err := n.BaremetalFlavor(t.Context(), "mn-many", mnRC)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("real Ironic started in %s; two nodes available in %s", ir.StartUp.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	ours8 := func(t *testing.T) *placementtest.Server {
		return placementtest.StartOurs(t, placementtest.Options{Release: release.V8})
	}
	runs := []mnRun{
		{"reference-8.0.0", func(t *testing.T) *placementtest.Server {
			return placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: release.V8})
		}, false},
		{"ours-8.0.0", ours8, false},
		{"ours-8.0.0+reconciler", ours8, true},
	}
	outcomes := map[string]*mnScenario{}
	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			start := time.Now()
			s := &mnScenario{
				scenario: &scenario{t: t, ctx: t.Context(), n: n, p: r.start(t)},
				ir:       ir, nodes: nodes, flavor: flavor, names: map[string]string{},
			}
			for j, u := range nodes {
				s.names[u] = fmt.Sprintf("mn-%d", j)
			}
			startIronicCompute(t, n, ir, mnHost, s.p.URL, nodes...)
			s.run(strconv.Itoa(i), r.reconcile)
			outcomes[r.name] = s
			t.Logf("%s:\n%s", r.name, strings.Join(s.record, "\n"))
			t.Logf("%s: run in %s", r.name, time.Since(start).Round(time.Millisecond))
		})
	}
	if len(outcomes) != len(runs) {
		t.Fatalf("%d of %d runs ended", len(outcomes), len(runs))
	}
	compareManyNodes(t, outcomes["reference-8.0.0"], outcomes["ours-8.0.0"], outcomes["ours-8.0.0+reconciler"])
	t.Logf("Placement aggregate and boots, per run:\n%s", manyNodesTable(runs, outcomes))
	t.Logf("scenario with Ironic's start-up: %s", time.Since(began).Round(time.Second))
}

// compareManyNodes checks the difference between the runs: ours without
// the reconciler is the reference to the line; with it, Nova's own
// mirroring is the same, then the reconciler adds the other node and the
// second boot lands on it.
func compareManyNodes(t *testing.T, ref, ours, rec *mnScenario) {
	t.Helper()
	if !slices.Equal(ours.record, ref.record) {
		t.Errorf("ours without the reconciler differs from the reference:\n%s\nreference:\n%s", strings.Join(ours.record, "\n"), strings.Join(ref.record, "\n"))
	}
	if rec.own != ref.own {
		t.Errorf("Nova's own mirroring left %s with ours, %s with the reference", rec.own, ref.own)
	}
	if ref.boots[1] != "NoValidHost" || rec.boots[1] == "NoValidHost" || rec.boots[1] == rec.boots[0] {
		t.Errorf("second boot: reference %s, ours with the reconciler %s (its first on %s); want NoValidHost, then ACTIVE on the other node", ref.boots[1], rec.boots[1], rec.boots[0])
	}
}

// manyNodesTable is the runs' outcomes side by side.
func manyNodesTable(runs []mnRun, outcomes map[string]*mnScenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-38s", "")
	for _, r := range runs {
		fmt.Fprintf(&b, " | %-22s", r.name)
	}
	rows := []struct {
		label string
		cell  func(s *mnScenario) string
	}{
		{"aggregate after Nova's own mirroring", func(s *mnScenario) string { return s.own }},
		{"nova-manage placement sync_aggregates", func(s *mnScenario) string { return cmpOr(s.novaSynced, "(not run)") }},
		{"aggregate after the reconciler", func(s *mnScenario) string { return cmpOr(s.mirrored, "(not run)") }},
		{"boot 1 into " + mnZone, func(s *mnScenario) string { return s.boots[0] }},
		{"boot 2 into " + mnZone, func(s *mnScenario) string { return s.boots[1] }},
	}
	for _, row := range rows {
		fmt.Fprintf(&b, "\n%-38s", row.label)
		for _, r := range runs {
			fmt.Fprintf(&b, " | %-22s", row.cell(outcomes[r.name]))
		}
	}
	return b.String()
}

// mnScenario is one run of the many-nodes scenario against one Placement.
type mnScenario struct {
	*scenario
	ir     *ironictest.Ironic
	nodes  []string          // node uuids, the providers' uuids too
	names  map[string]string // node uuid → mn-0, mn-1
	flavor string
	agg    aggregate
	// own and mirrored are the aggregate's members in Placement after
	// Nova's own mirroring and after the reconciler ("" when not run);
	// boots are where the two boots landed, a node or NoValidHost.
	own, mirrored string
	// novaSynced is what nova-manage placement sync_aggregates did.
	novaSynced string
	boots      [2]string
}

// run makes the zone's aggregate through Nova's API, adds the host,
// records what Nova's own mirroring left in Placement, runs the
// reconciler if asked, boots twice into the zone and deletes everything.
func (s *mnScenario) run(suffix string, reconcile bool) {
	s.freeNodes("set up")
	s.createZone("mn-az-" + suffix)
	s.own = s.members()
	if first := s.firstNode(); s.own != first {
		s.t.Fatalf("Nova's own mirroring put %s in the aggregate; Nova 26.2 mirrors the host's first compute node, %s", s.own, first)
	}
	s.record = append(s.record, "Nova's own mirroring: "+s.own+", the host's first compute node")
	want := []string{s.own}
	if reconcile {
		s.reconcile()
		want = slices.Sorted(maps.Values(s.names))
	} else {
		s.novaSync()
	}
	var ids []string
	for i := range s.boots {
		id, landed := s.boot(i, want)
		s.boots[i] = landed
		if id != "" {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if err := s.n.Delete(s.ctx, id, 3*time.Minute); err != nil {
			s.t.Fatal(err)
		}
		if got := s.allocs(id); got != "none" {
			s.t.Fatalf("deleted server %s still has allocations %s", id, got)
		}
	}
	s.freeNodes("servers deleted")
}
