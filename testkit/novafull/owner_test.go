package novafull

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The OWNER_NOVA scenario's hosts: ow-a carries one FPGA of two regions,
// reported by the agent's fpga driver as a child provider with
// OWNER_CYBORG (as Cyborg reports it); ow-b has none.
const (
	ownerFPGAHost  = "ow-a"
	ownerPlainHost = "ow-b"
	ownerDevice    = "0000:3b:00.0"
	// ownerToken is the reconciler endpoint's token: heartbeats that
	// carry it are authenticated, so they give the gate a version.
	ownerToken = "novafull-heartbeat"
)

func ownerHosts() []string { return []string{ownerFPGAHost, ownerPlainHost} }

// ownerFlavors are the scenario's flavors, 1 VCPU, 512 MB and 1 GB each,
// by name with their extra specs: an ordinary one; one asking for an
// FPGA as any flavor may (resources:FPGA); one asking for it as a Cyborg
// device profile's group does (the group requires OWNER_CYBORG).
func ownerFlavors() map[string]map[string]string {
	return map[string]map[string]string{
		"ow-small":  nil,
		"ow-fpga":   {"resources:FPGA": "1"},
		"ow-cyborg": {"resources1:FPGA": "1", "trait1:OWNER_CYBORG": "required"},
	}
}

// ownerStep is one checked outcome; feature marks a step whose expected
// outcome depends on the Placement having the pre-filter.
type ownerStep struct {
	label, outcome string
	feature        bool
}

// ownerScenario is one run of the OWNER_NOVA scenario against one
// Placement.
type ownerScenario struct {
	*scenario
	// prefilter: the Placement is ours, with the pre-filter following
	// the reconciler's gate (auto); the reference has none.
	prefilter bool
	rec       *reconciler.Reconciler
	recURL    string
	device    string // the FPGA's provider uuid
	agents    map[string]func()
	steps     []ownerStep
}

// lateGate answers the pre-filter for a reconciler made after the
// server it filters for (the reconciler needs the server's URL).
type lateGate struct {
	r atomic.Pointer[reconciler.Reconciler]
}

func (g *lateGate) OwnerNovaGateOpen() bool {
	r := g.r.Load()
	return r != nil && r.OwnerNovaGateOpen()
}

// TestNovaScheduler_OwnerNova runs Nova's scheduler against our
// Placement at 8.0.0 and 15.0.0, with the OWNER_NOVA pre-filter
// following the reconciler's gate, and the reference 8.0.0, which has
// no pre-filter. Nova 26.2's computes report no service version that
// opens the gate, so the versions come from the agents' heartbeats (one
// agent per host, the fpga driver's): with one at 72 the gate stays
// closed, and every boot lands as on the reference, an FPGA flavor on
// the Cyborg-owned device included; once both report 73 the reconciler
// stamps OWNER_NOVA on the compute nodes and the pre-filter turns on:
// the FPGA flavor gets NoValidHost from ours, while ordinary flavors and
// a flavor whose group asks for OWNER_CYBORG (a device profile) boot as
// before; with the gate closed by the operator, the FPGA flavor lands on
// the device again. Every outcome but that one FPGA boot is the same for
// all three Placements.
func TestNovaScheduler_OwnerNova(t *testing.T) {
	n := nova.Get(t)
	ctx := context.Background()
	flavors := map[string]string{}
	for name, specs := range ownerFlavors() {
		id, err := n.Flavor(ctx, name, 1, 512, 1)
		if err == nil && specs != nil {
			err = n.Call(ctx, http.StatusOK, http.MethodPost, "/flavors/"+id+"/os-extra_specs", map[string]any{"extra_specs": specs}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		flavors[name] = id
	}
	placements := []struct {
		name      string
		prefilter bool
		release   release.Release
	}{{"ours-8.0.0", true, release.V8}, {"ours-15.0.0", true, release.V15}, {"reference-8.0.0", false, release.V8}}
	results := map[string][]ownerStep{}
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			start := time.Now()
			gate := &lateGate{}
			var p *placementtest.Server
			if pl.prefilter {
				p = placementtest.StartOurs(t, placementtest.Options{Release: pl.release, OwnerNovaGate: gate, SchedulerUsers: []string{Project}})
			} else {
				p = placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: pl.release})
			}
			s := &ownerScenario{scenario: &scenario{t: t, ctx: ctx, n: n, p: p, flavors: flavors}, prefilter: pl.prefilter}
			s.setUp(gate)
			s.run()
			results[pl.name] = s.steps
			t.Logf("%s: %d outcomes checked in %s", pl.name, len(s.steps), time.Since(start).Round(time.Millisecond))
		})
	}
	compareOwner(t, results, placements[len(placements)-1].name)
}

// compareOwner checks that every Placement's outcomes are the
// reference's, step by step, but for the steps marked as the
// pre-filter's, and logs the table.
func compareOwner(t *testing.T, results map[string][]ownerStep, reference string) {
	want := results[reference]
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(results)) {
		got := results[name]
		if len(got) != len(want) {
			t.Errorf("%s checked %d outcomes, the reference %d", name, len(got), len(want))
			continue
		}
		same := 0
		for i := range got {
			switch {
			case got[i].label != want[i].label:
				t.Errorf("%s step %d is %q, the reference's %q", name, i, got[i].label, want[i].label)
			case got[i].outcome == want[i].outcome:
				same++
			case !got[i].feature:
				t.Errorf("%s: %s: %s, the reference %s", name, got[i].label, got[i].outcome, want[i].outcome)
			default:
				fmt.Fprintf(&b, "\n%s: %s: %s (reference: %s), the pre-filter's", name, got[i].label, got[i].outcome, want[i].outcome)
			}
		}
		fmt.Fprintf(&b, "\n%s: %d of %d outcomes as the reference's", name, same, len(got))
	}
	t.Logf("OWNER_NOVA outcomes:%s", b.String())
}

// setUp points Nova at the Placement, forces down the computes other
// scenarios left (Nova lists them until deleted, and the gate counts
// every compute Nova lists), starts ow-a and ow-b, the reconciler with
// its endpoint, and one agent per host: ow-a's at version 73, ow-b's at
// 72.
func (s *ownerScenario) setUp(gate *lateGate) {
	t := s.t
	if err := s.n.UsePlacement(s.p.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.n.UsePlacement("") })
	s.forceDownOthers()
	t.Cleanup(s.n.StopComputes)
	if err := s.n.StartComputes(s.ctx, Compute{Host: ownerFPGAHost}, Compute{Host: ownerPlainHost}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.deleteServers)
	s.rp, s.host = map[string]string{}, map[string]string{}
	for _, h := range ownerHosts() {
		s.rp[h] = s.providerNamed(h)
		s.host[s.rp[h]] = h
	}
	s.device = fpga.ProviderUUID(ownerFPGAHost, ownerDevice)
	s.host[s.device] = ownerFPGAHost + "/fpga"

	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: identity{}}}
	pc.SetToken(Token)
	api := novaclient.NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(s.n.Endpoint)})
	rec, err := reconciler.New(reconciler.Options{Placement: reconciler.FromClient(s.client()), Nova: api,
		Jobs: map[string]string{reconciler.JobOwnerTraits: "@every 1h"}, Token: ownerToken, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec.Handler())
	t.Cleanup(srv.Close)
	s.rec, s.recURL = rec, srv.URL
	gate.r.Store(rec)
	s.agents = map[string]func(){}
	t.Cleanup(func() {
		for _, stop := range s.agents {
			stop()
		}
	})
	s.startAgent(ownerFPGAHost, `{"devices":[{"pci_address":"`+ownerDevice+`","vendor":"8086","product":"0b30","function":"gzip-v2","regions":2}]}`, 73)
	s.startAgent(ownerPlainHost, `{"devices":[]}`, 72)
	s.waitFor("the FPGA's provider", func() bool {
		code, _ := s.p.Do(t, http.MethodGet, "/resource_providers/"+s.device+"/inventories", "1.39", nil)
		return code == http.StatusOK
	})
}

func (s *ownerScenario) client() *placementclient.Client {
	c, err := placementclient.New(s.ctx, placementclient.Options{Endpoint: s.p.URL, Token: s.p.Token})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// startAgent runs host's agent with the fpga driver over devices (a
// device file's text), heartbeating version to the reconciler's
// endpoint, until the scenario ends or the host's agent is started
// again; it returns once the reconciler holds the heartbeat.
func (s *ownerScenario) startAgent(host, devices string, version int) {
	t := s.t
	if stop := s.agents[host]; stop != nil {
		stop()
	}
	file := filepath.Join(t.TempDir(), "devices.json")
	if err := os.WriteFile(file, []byte(devices), 0o600); err != nil {
		t.Fatal(err)
	}
	// The agents' passes every 2 s are logged at debug: left out.
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	d, err := fpga.New(fpga.Options{Host: host, File: file, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Placement: s.client(), Drivers: []drivers.Driver{d}, Host: host, Version: "novafull",
		Interval: 2 * time.Second, ServiceURL: s.recURL + "/v1/services", ServiceToken: ownerToken, HeartbeatInterval: time.Second,
		NovaComputeVersion: version, Logger: log, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	s.agents[host] = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent %s: %v", host, err)
		}
		delete(s.agents, host)
	}
	s.waitFor(fmt.Sprintf("%s's heartbeat at version %d", host, version), func() bool {
		return slices.ContainsFunc(s.rec.Services(), func(r reconciler.ServiceRecord) bool {
			return r.Host == host && r.Version == version && r.Authenticated
		})
	})
}

// waitFor polls cond for up to a minute, failing the scenario then.
func (s *ownerScenario) waitFor(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("no %s after a minute", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// forceDownOthers forces down every nova-compute Nova lists but the
// scenario's, as an operator does with a compute that is gone, and
// lifts it at the end for the scenarios that start them again.
func (s *ownerScenario) forceDownOthers() {
	var out struct {
		Services []struct {
			ID         string `json:"id"`
			Host       string `json:"host"`
			ForcedDown bool   `json:"forced_down"`
		} `json:"services"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/os-services?binary=nova-compute", nil, &out); err != nil {
		s.t.Fatal(err)
	}
	for _, svc := range out.Services {
		if slices.Contains(ownerHosts(), svc.Host) || svc.ForcedDown {
			continue
		}
		s.forceDown(svc.ID, true)
		s.t.Cleanup(func() { s.forceDown(svc.ID, false) })
	}
}

func (s *ownerScenario) forceDown(id string, down bool) {
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPut, "/os-services/"+id, map[string]any{"forced_down": down}, nil); err != nil {
		s.t.Error(err)
	}
}
