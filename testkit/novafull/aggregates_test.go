package novafull

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// The aggregates scenario's hosts and projects: az1 holds ag-a and ag-b,
// az2 holds ag-c, and tenant-one's aggregate (no zone) holds ag-b;
// tenant-two is named by no aggregate, so it may go anywhere
// (placement_aggregate_required_for_tenants is off, see writeConf).
var aggHosts = []string{"ag-a", "ag-b", "ag-c"}

const (
	tenantOne = "tenant-one"
	tenantTwo = "tenant-two"
)

// aggScenario is one run of the aggregates scenario against one
// Placement; record is compared between Placements, rows is the table.
type aggScenario struct {
	*scenario
	flavor string
	aggs   map[string]aggregate       // az1, az2, t1
	member map[string]map[string]bool // host → aggregate names, as Nova has it
	sync   *reconciler.AggregateSync
	rows   []string
}

type aggregate struct {
	ID   int    `json:"id"`
	UUID string `json:"uuid"`
	name string
}

// TestNovaScheduler_Aggregates runs Nova's scheduler against our
// Placement at 8.0.0 and 15.0.0 and the reference 8.0.0 with host
// aggregates made through Nova's API (two availability zones, one
// tenant's aggregate) and mirrored into Placement by our reconciler:
// boots into each zone and as each tenant land only where the
// aggregates allow, or fail with NoValidHost; after ag-b moves from az1
// to az2 and the reconciler runs, the next boots follow it. Nova's own
// mirroring (nova-api writes the first node of a host it adds or
// removes) is recorded beside what the reconciler still had to write.
func TestNovaScheduler_Aggregates(t *testing.T) {
	n := nova.Get(t)
	ctx := context.Background()
	flavor, err := n.Flavor(ctx, "ag-small", 1, 512, 1)
	if err != nil {
		t.Fatal(err)
	}
	placements := placementsUnderTest()
	outcomes, tables := map[string][]string{}, map[string][]string{}
	for i, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			start := time.Now()
			s := &aggScenario{scenario: &scenario{t: t, ctx: ctx, n: n, p: pl.start(t)}, flavor: flavor}
			s.setUp(fmt.Sprint(i))
			s.run()
			outcomes[pl.name], tables[pl.name] = s.record, s.rows
			t.Logf("%s: %d outcomes checked in %s", pl.name, len(s.record), time.Since(start).Round(time.Millisecond))
		})
	}
	sameAsReference(t, placements, outcomes)
	var b strings.Builder
	fmt.Fprintf(&b, "%-52s", "boot (project, zone → allowed)")
	for _, pl := range placements {
		fmt.Fprintf(&b, " | %-16s", pl.name)
	}
	for r := range tables[placements[0].name] {
		fmt.Fprintf(&b, "\n%-52s", strings.SplitN(tables[placements[0].name][r], "\t", 2)[0])
		for _, pl := range placements {
			landed := "-"
			if r < len(tables[pl.name]) {
				landed = strings.SplitN(tables[pl.name][r], "\t", 2)[1]
			}
			fmt.Fprintf(&b, " | %-16s", landed)
		}
	}
	t.Logf("where each boot landed:\n%s", b.String())
}

// setUp points Nova at the Placement, starts the computes, makes the
// aggregates through Nova's API (names suffixed: a run's aggregates are
// deleted at its end, but names must be unique meanwhile) and the
// reconciler that mirrors them.
func (s *aggScenario) setUp(suffix string) {
	t := s.t
	var computes []Compute
	for _, h := range aggHosts {
		computes = append(computes, Compute{Host: h})
	}
	s.setUpComputes(computes, s.deleteServers)
	s.aggs, s.member = map[string]aggregate{}, map[string]map[string]bool{}
	for _, h := range aggHosts {
		s.member[h] = map[string]bool{}
	}
	t.Cleanup(s.deleteAggregates)
	s.createAggregate("az1", "ag-az1-"+suffix, map[string]any{"availability_zone": "az1"})
	s.createAggregate("az2", "ag-az2-"+suffix, map[string]any{"availability_zone": "az2"})
	s.createAggregate("t1", "ag-t1-"+suffix, nil)
	s.aggAction("t1", map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"filter_tenant_id": tenantOne}}})
	s.sync = s.newSync()
}

// newSync is the reconciler's aggregate sync as sync-aggregates builds
// it: a compute API client of nova-api (with the identity headers the
// harness's Keystone pipeline reads) and a Placement client.
func (s *aggScenario) newSync() *reconciler.AggregateSync {
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: identity{}}}
	pc.SetToken(Token)
	api := novaclient.NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(s.n.Endpoint)})
	pcl, err := placementclient.New(s.ctx, placementclient.Options{Endpoint: s.p.URL, Token: s.p.Token})
	if err != nil {
		s.t.Fatal(err)
	}
	state, err := reconciler.OpenStateFile("")
	if err != nil {
		s.t.Fatal(err)
	}
	return &reconciler.AggregateSync{Nova: api, Placement: reconciler.FromClient(pcl), State: state, Logger: zaptest.NewLogger(s.t)}
}

// identity adds the admin's identity headers to every request.
type identity struct{}

func (identity) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	SetIdentity(r.Header, Project)
	return http.DefaultTransport.RoundTrip(r)
}

// run: mirror, boot before the move, move ag-b to az2 while Placement is
// unreachable for nova-api (its own mirroring is lost, as when Placement
// is down or restarting), boot on the stale mirror, reconcile, boot.
func (s *aggScenario) run() {
	s.addHost("az1", "ag-a")
	s.addHost("az1", "ag-b")
	s.addHost("az2", "ag-c")
	s.addHost("t1", "ag-b")
	s.mirror("set up")
	s.boot("before", Project, "az1", "ag-a", "ag-b")
	s.boot("before", Project, "az2", "ag-c")
	s.boot("before", tenantOne, "", "ag-b")
	s.boot("before", tenantOne, "az2")
	s.boot("before", tenantTwo, "az1", "ag-a", "ag-b")

	s.unreachable(func() {
		s.removeHost("az1", "ag-b")
		s.addHost("az2", "ag-b")
	})
	s.boot("moved, not mirrored", tenantOne, "az2")
	s.mirror("ag-b moved to az2")
	s.boot("after", tenantOne, "az2", "ag-b")
	s.boot("after", tenantOne, "az1")
	s.boot("after", Project, "az1", "ag-a")
	s.boot("after", tenantTwo, "az2", "ag-b", "ag-c")
}

// unreachable runs fn with the harness's router answering 503 for
// Placement: nova-api's own mirroring of aggregate changes then logs a
// warning and is never retried.
func (s *aggScenario) unreachable(fn func()) {
	s.t.Helper()
	if err := s.n.UsePlacement(""); err != nil {
		s.t.Fatal(err)
	}
	fn()
	if err := s.n.UsePlacement(s.p.URL); err != nil {
		s.t.Fatal(err)
	}
}

// mirror records what Nova's own mirroring left in Placement, runs the
// reconciler and checks that every provider's aggregates are then its
// host's aggregates in Nova, and that a second run writes nothing.
func (s *aggScenario) mirror(step string) {
	t := s.t
	t.Helper()
	own := s.placementAggs()
	s.record = append(s.record, fmt.Sprintf("%s: Nova's own mirroring: %s", step, own))
	res, err := s.sync.Run(s.ctx, false)
	if err != nil {
		t.Fatalf("%s: sync: %v", step, err)
	}
	if res.Refused != "" || len(res.Failed()) != 0 {
		t.Fatalf("%s: sync refused %q, failed %+v", step, res.Refused, res.Failed())
	}
	var want []string
	for _, h := range aggHosts {
		want = append(want, fmt.Sprintf("%s=%v", h, slices.Sorted(maps.Keys(s.member[h]))))
	}
	if got := s.placementAggs(); got != strings.Join(want, " ") {
		t.Fatalf("%s: after the reconciler Placement has %s, want %s", step, got, strings.Join(want, " "))
	}
	again, err := s.sync.Run(s.ctx, false)
	if err != nil || again.Writes() != 0 {
		t.Fatalf("%s: second sync: %d writes, %v; want none", step, again.Writes(), err)
	}
	s.record = append(s.record, fmt.Sprintf("%s: reconciler wrote %d, then Placement has %s", step, res.Writes(), strings.Join(want, " ")))
	t.Logf("%s: Nova's own mirroring left %s; the reconciler wrote %d provider(s)", step, own, res.Writes())
}

// placementAggs is each host's provider's aggregates, by name.
func (s *aggScenario) placementAggs() string {
	names := map[string]string{}
	for _, a := range s.aggs {
		names[a.UUID] = a.name
	}
	var parts []string
	for _, h := range aggHosts {
		var out struct {
			Aggregates []string `json:"aggregates"`
		}
		s.placement("/resource_providers/"+s.rp[h]+"/aggregates", &out)
		var got []string
		for _, u := range out.Aggregates {
			got = append(got, cmpOr(names[u], u))
		}
		slices.Sort(got)
		parts = append(parts, fmt.Sprintf("%s=%v", h, got))
	}
	return strings.Join(parts, " ")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
