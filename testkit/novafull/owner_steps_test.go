package novafull

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/reconciler"
)

// ownerSmall is what every flavor of the scenario takes from its host.
const ownerSmall = "DISK_GB=1,MEMORY_MB=512,VCPU=1"

// run is the scenario's steps: the gate closed by a compute at 72, open
// once both report 73, then closed by the operator.
func (s *ownerScenario) run() {
	s.job("ow-b's agent at 72", false)
	s.owners("gate closed", "ow-a/fpga=[OWNER_CYBORG] ow-a=[] ow-b=[]")
	s.boot("gate closed", "ow-small", false, ownerHosts()...)
	s.boot("gate closed", "ow-fpga", false, ownerFPGAHost)
	s.boot("gate closed", "ow-cyborg", false, ownerFPGAHost)
	s.clear("gate closed")

	s.startAgent(ownerPlainHost, `{"devices":[]}`, 73)
	s.job("ow-b's agent at 73", true)
	s.owners("gate open", "ow-a/fpga=[OWNER_CYBORG] ow-a=[OWNER_NOVA] ow-b=[OWNER_NOVA]")
	s.boot("gate open", "ow-small", false, ownerHosts()...)
	// The one outcome that is the pre-filter's: the only FPGA is
	// Cyborg's, so ours finds no host; the reference hands it out.
	var fpgaHosts []string
	if !s.prefilter {
		fpgaHosts = []string{ownerFPGAHost}
	}
	s.boot("gate open", "ow-fpga", true, fpgaHosts...)
	s.boot("gate open", "ow-cyborg", false, ownerFPGAHost)
	s.clear("gate open")

	if err := s.rec.SetGateOverride(reconciler.GateClosed); err != nil {
		s.t.Fatal(err)
	}
	if g := s.rec.Gate(); g.Open || g.PrefilterOn {
		s.t.Fatalf("gate after override closed: %+v", g)
	}
	s.boot("closed by the operator", "ow-fpga", false, ownerFPGAHost)
	s.clear("closed by the operator")
}

func (s *ownerScenario) step(label, outcome string, feature bool) {
	s.steps = append(s.steps, ownerStep{label: label, outcome: outcome, feature: feature})
}

// job runs the reconciler's owner_traits job (it reads Nova's compute
// list, evaluates the gate from the heartbeats and stamps while open)
// and checks the gate and the pre-filter are as wanted.
func (s *ownerScenario) job(step string, open bool) {
	t := s.t
	t.Helper()
	rec, err := s.rec.RunJob(s.ctx, reconciler.JobOwnerTraits)
	if err != nil || rec.Result != "ok" {
		t.Fatalf("%s: owner_traits: %v %+v", step, err, rec)
	}
	g := s.rec.Gate()
	if g.Open != open || g.PrefilterOn != open {
		t.Fatalf("%s: gate %+v, want open and pre-filter armed %v", step, g, open)
	}
	s.step(step+": owner_traits job", fmt.Sprintf("gate open %v (%s), %d stamped, pre-filter armed %v", g.Open, g.Reason, rec.Changes, g.PrefilterOn), false)
	t.Logf("%s: gate open %v: %s; %d stamped", step, g.Open, g.Reason, rec.Changes)
}

// owners checks each provider's owner traits.
func (s *ownerScenario) owners(step, want string) {
	s.t.Helper()
	var parts []string
	for _, u := range slices.Sorted(maps.Keys(s.host)) {
		var out struct {
			Traits []string `json:"traits"`
		}
		s.placement("/resource_providers/"+u+"/traits", &out)
		owners := slices.DeleteFunc(out.Traits, func(tr string) bool { return !strings.HasPrefix(tr, "OWNER_") })
		slices.Sort(owners)
		parts = append(parts, fmt.Sprintf("%s=%v", s.host[u], owners))
	}
	slices.Sort(parts)
	if got := strings.Join(parts, " "); got != want {
		s.t.Fatalf("%s: owner traits %s, want %s", step, got, want)
	}
	s.step(step+": owner traits", want, false)
}

// boot boots one server of flavor and checks that it lands on one of
// allowed, holding the flavor's resources there and, for an FPGA flavor,
// one FPGA of the device; or, with allowed empty, that it fails with
// NoValidHost and holds nothing. Which of two allowed hosts an ordinary
// flavor lands on is the weighers' tie-break: logged, not compared.
func (s *ownerScenario) boot(phase, flavor string, feature bool, allowed ...string) {
	t := s.t
	t.Helper()
	label := fmt.Sprintf("%s: boot %s", phase, flavor)
	id, err := s.n.Boot(s.ctx, fmt.Sprintf("%s-%d", flavor, len(s.steps)), s.flavors[flavor])
	if err != nil {
		t.Fatal(err)
	}
	srv := s.wait(id, "ACTIVE", "ERROR")
	var outcome, want string
	switch {
	case srv.Status == "ERROR":
		if len(allowed) != 0 || !srv.NoValidHost() {
			t.Fatalf("%s: ERROR with fault %q, want a host of %v\n%s", label, srv.FaultMessage(), allowed, s.n.Logs())
		}
		outcome, want = "NoValidHost", "none"
	case !slices.Contains(allowed, srv.Host):
		t.Fatalf("%s: landed on %s, want %v", label, srv.Host, cmpOr(strings.Join(allowed, ","), "NoValidHost"))
	default:
		outcome, want = "ACTIVE on "+strings.Join(allowed, " or "), srv.Host+":"+ownerSmall
		if ownerFlavors()[flavor] != nil {
			want = ownerFPGAHost + "/fpga:FPGA=1 " + want
		}
	}
	got := s.waitAllocs(id, want)
	t.Logf("%s: %s, allocations %s", label, cmpOr(srv.Host, "NoValidHost"), got)
	if len(allowed) > 1 {
		got = strings.ReplaceAll(got, srv.Host+":", "its host:")
	}
	s.step(label, outcome+", allocations "+got, feature)
}

// ownerAllocs is a consumer's allocations as "provider:RC=n,…", the
// providers by host (the device as ow-a/fpga), sorted, or "none".
func (s *ownerScenario) ownerAllocs(consumer string) string {
	var parts []string
	for rp, r := range s.allocations(consumer) {
		var rcs []string
		for _, rc := range slices.Sorted(maps.Keys(r)) {
			rcs = append(rcs, fmt.Sprintf("%s=%d", rc, r[rc]))
		}
		parts = append(parts, cmpOr(s.host[rp], rp)+":"+strings.Join(rcs, ","))
	}
	slices.Sort(parts)
	return cmpOr(strings.Join(parts, " "), "none")
}

// waitAllocs waits up to 30 s for the consumer's allocations to be want.
func (s *ownerScenario) waitAllocs(consumer, want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := s.ownerAllocs(consumer)
		if got == want {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("allocations of %s: %s, want %s", consumer, got, want)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// clear deletes every server and checks that no provider has usage left.
func (s *ownerScenario) clear(phase string) {
	s.t.Helper()
	(&aggScenario{scenario: s.scenario}).deleteServers()
	want := "ow-a/fpga=0 ow-a=0 ow-b=0"
	deadline := time.Now().Add(30 * time.Second)
	for {
		var parts []string
		for u, name := range s.host {
			var out struct {
				Usages map[string]int `json:"usages"`
			}
			s.placement("/resource_providers/"+u+"/usages", &out)
			sum := 0
			for _, n := range out.Usages {
				sum += n
			}
			parts = append(parts, fmt.Sprintf("%s=%d", name, sum))
		}
		slices.Sort(parts)
		got := strings.Join(parts, " ")
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: usages after deleting every server: %s, want %s", phase, got, want)
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.step(phase+": every server deleted", "usages "+want, false)
}
