package novafull

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// createZone makes a host aggregate with the scenario's availability
// zone through Nova's API and adds the ironic host to it; nova-api's own
// mirroring into Placement happens within the add_host request. The
// host is removed and the aggregate deleted at the run's cleanup, so the
// next run and the other scenarios see no zone.
func (s *mnScenario) createZone(name string) {
	t := s.t
	t.Helper()
	var out struct {
		Aggregate aggregate `json:"aggregate"`
	}
	body := map[string]any{"aggregate": map[string]any{"name": name, "availability_zone": mnZone}}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, "/os-aggregates", body, &out); err != nil {
		t.Fatal(err)
	}
	s.agg = out.Aggregate
	path := "/os-aggregates/" + strconv.Itoa(s.agg.ID)
	added := false
	// The test's context is done by its cleanup.
	t.Cleanup(func() {
		ctx := context.Background()
		if added {
			if err := s.n.Call(ctx, http.StatusOK, http.MethodPost, path+"/action", map[string]any{"remove_host": map[string]any{"host": mnHost}}, nil); err != nil {
				t.Error(err)
			}
		}
		if err := s.n.Call(ctx, http.StatusOK, http.MethodDelete, path, nil, nil); err != nil {
			t.Error(err)
		}
	})
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, path+"/action", map[string]any{"add_host": map[string]any{"host": mnHost}}, nil); err != nil {
		t.Fatal(err)
	}
	added = true
}

// members is the nodes whose providers are in the zone's aggregate in
// Placement, as "mn-0,mn-1", or "none".
func (s *mnScenario) members() string {
	var in []string
	for _, u := range s.nodes {
		var out struct {
			Aggregates []string `json:"aggregates"`
		}
		s.placement("/resource_providers/"+u+"/aggregates", &out)
		if slices.Contains(out.Aggregates, s.agg.UUID) {
			in = append(in, s.names[u])
		}
	}
	slices.Sort(in)
	return cmpOr(strings.Join(in, ","), "none")
}

// reconcile runs the reconciler's aggregate sync as
// TestNovaScheduler_Aggregates does (against nova-api, as
// sync-aggregates builds it): every node of the host must then be in the
// aggregate, and a second run must write nothing.
func (s *mnScenario) reconcile() {
	t := s.t
	t.Helper()
	sync := (&aggScenario{scenario: s.scenario}).newSync()
	res, err := sync.Run(s.ctx, false)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if res.Refused != "" || len(res.Failed()) != 0 {
		t.Fatalf("sync refused %q, failed %+v", res.Refused, res.Failed())
	}
	if want := len(s.nodes) - 1; res.Writes() != want {
		t.Fatalf("the reconciler wrote %d provider(s), want %d: every node but the one Nova mirrored", res.Writes(), want)
	}
	s.mirrored = s.members()
	if want := strings.Join(slices.Sorted(maps.Values(s.names)), ","); s.mirrored != want {
		t.Fatalf("after the reconciler the aggregate holds %s, want %s", s.mirrored, want)
	}
	again, err := sync.Run(s.ctx, false)
	if err != nil || again.Writes() != 0 {
		t.Fatalf("second sync: %d writes, %v; want none", again.Writes(), err)
	}
	s.record = append(s.record, fmt.Sprintf("reconciler wrote %d provider(s): %s", res.Writes(), s.mirrored))
	t.Logf("Nova's own mirroring left %s; the reconciler wrote %d provider(s), then %s", s.own, res.Writes(), s.mirrored)
}

// boot boots the bare-metal flavor into the zone. It must land on one of
// allowed not taken by an earlier boot, ACTIVE with its one unit
// allocated there, or, with none left, fail with NoValidHost while
// another node of the host is free. It returns the server's id ("" when
// it failed, and was deleted) and where it landed.
func (s *mnScenario) boot(i int, allowed []string) (string, string) {
	t := s.t
	t.Helper()
	free := slices.DeleteFunc(slices.Clone(allowed), func(n string) bool { return slices.Contains(s.boots[:i], n) })
	label := fmt.Sprintf("boot %d into %s", i+1, mnZone)
	id, err := s.n.BootIn(s.ctx, Project, mnZone, fmt.Sprintf("mn-%d", i+1), s.flavor)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.n.WaitServer(s.ctx, id, 3*time.Minute, "ACTIVE", "ERROR")
	if err != nil {
		t.Fatalf("%s: %v\n%s", label, err, s.n.Logs())
	}
	if srv.Status == "ERROR" {
		if len(free) != 0 || !srv.NoValidHost() {
			t.Fatalf("%s: ERROR with fault %q, want ACTIVE on one of %v\n%s", label, srv.FaultMessage(), free, s.n.Logs())
		}
		if got := s.bmAllocs(id); got != "none" {
			t.Fatalf("%s: NoValidHost with allocations %s", label, got)
		}
		s.record = append(s.record, fmt.Sprintf("%s: NoValidHost, no allocation; %s", label, s.otherFree(i)))
		s.delete(id)
		return "", "NoValidHost"
	}
	node := s.nodeOf(id)
	if !slices.Contains(free, s.names[node]) {
		t.Fatalf("%s: ACTIVE on %s, want one of %v", label, s.names[node], free)
	}
	if got := s.ir.Get(t, node); got.InstanceUUID == nil || *got.InstanceUUID != id || got.ProvisionState != "active" {
		t.Fatalf("%s: node %s is %s with instance %v, want active with %s", label, s.names[node], got.ProvisionState, got.InstanceUUID, id)
	}
	allocs := fmt.Sprintf("%s:%s=1", s.names[node], mnRC)
	if got := s.bmAllocs(id); got != allocs {
		t.Fatalf("%s: allocations %s, want %s", label, got, allocs)
	}
	s.record = append(s.record, fmt.Sprintf("%s: ACTIVE on %s (Ironic: active), allocations %s", label, s.names[node], allocs))
	return id, s.names[node]
}

// otherFree checks that a node no boot took is free (Ironic: available,
// no instance, not in maintenance; Placement: reserved 0 of 1, nothing
// used) and outside the zone's aggregate, and says so.
func (s *mnScenario) otherFree(i int) string {
	t := s.t
	t.Helper()
	var out []string
	for _, u := range s.nodes {
		if slices.Contains(s.boots[:i], s.names[u]) {
			continue
		}
		n := s.ir.Get(t, u)
		if n.ProvisionState != "available" || n.InstanceUUID != nil || n.Maintenance {
			t.Fatalf("%s is %s (instance %v, maintenance %v), want available", s.names[u], n.ProvisionState, n.InstanceUUID, n.Maintenance)
		}
		var usages struct {
			Usages map[string]int `json:"usages"`
		}
		s.placement("/resource_providers/"+u+"/usages", &usages)
		if r := reservedOf(t, s.p, u); r != 0 || usages.Usages[mnRC] != 0 {
			t.Fatalf("%s: reserved %d, used %d in Placement, want 0 and 0", s.names[u], r, usages.Usages[mnRC])
		}
		out = append(out, s.names[u]+" free (Ironic: available; reserved 0/1, used 0) but not in the aggregate")
	}
	if len(out) == 0 {
		t.Fatal("no free node: the NoValidHost shows nothing of the mirroring")
	}
	if s.members() != s.own {
		t.Fatalf("the aggregate now holds %s, was %s", s.members(), s.own)
	}
	return strings.Join(out, "; ")
}

// nodeOf is the node a server runs on: the ironic driver's compute node
// name, the node's uuid.
func (s *mnScenario) nodeOf(id string) string {
	s.t.Helper()
	var out struct {
		Server struct {
			Node string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
		} `json:"server"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/servers/"+id, nil, &out); err != nil {
		s.t.Fatal(err)
	}
	return out.Server.Node
}

// bmAllocs is a consumer's allocations as "mn-0:RC=n,…", or "none".
func (s *mnScenario) bmAllocs(consumer string) string {
	var parts []string
	for rp, r := range s.allocations(consumer) {
		for rc, n := range r {
			parts = append(parts, fmt.Sprintf("%s:%s=%d", cmpOr(s.names[rp], rp), rc, n))
		}
	}
	slices.Sort(parts)
	return cmpOr(strings.Join(parts, ","), "none")
}

// freeNodes waits until both nodes are available in Ironic and their
// providers hold nothing reserved (Nova's compute reports a change
// within its periodic), failing after two minutes.
func (s *mnScenario) freeNodes(step string) {
	t := s.t
	t.Helper()
	for _, u := range s.nodes {
		s.ir.WaitState(t, u, "available")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var held []string
		for _, u := range s.nodes {
			if r := reservedOf(t, s.p, u); r != 0 {
				held = append(held, fmt.Sprintf("%s=%d", s.names[u], r))
			}
		}
		if len(held) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: reserved %v, want 0 on every node\n%s", step, held, s.n.Logs())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// firstNode is the host's first compute node, the one nova-api mirrors:
// os-hypervisors lists compute nodes in the order of their ids, as
// add_host_to_aggregate reads them.
func (s *mnScenario) firstNode() string {
	s.t.Helper()
	var out struct {
		Hypervisors []struct {
			Name    string `json:"hypervisor_hostname"`
			Service struct {
				Host string `json:"host"`
			} `json:"service"`
		} `json:"hypervisors"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/os-hypervisors/detail", nil, &out); err != nil {
		s.t.Fatal(err)
	}
	for _, h := range out.Hypervisors {
		if h.Service.Host == mnHost {
			return cmpOr(s.names[h.Name], h.Name)
		}
	}
	s.t.Fatalf("Nova lists no compute node of %s", mnHost)
	return ""
}

// novaSync runs Nova's own repair, nova-manage placement
// sync_aggregates: Nova 26.2 refuses a host with more than one compute
// node (exit 1, TooManyComputesForHost) and writes nothing.
func (s *mnScenario) novaSync() {
	t := s.t
	t.Helper()
	out, err := s.n.Manage(s.ctx, "placement", "sync_aggregates")
	var exit *exec.ExitError
	const refusal = "Unexpected number of compute node records (2) found for host " + mnHost
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, refusal) {
		t.Fatalf("nova-manage placement sync_aggregates: %v, want exit 1 with %q:\n%s", err, refusal, out)
	}
	if got := s.members(); got != s.own {
		t.Fatalf("after nova-manage the aggregate holds %s, was %s", got, s.own)
	}
	s.novaSynced = "exit 1, wrote nothing"
	s.record = append(s.record, "nova-manage placement sync_aggregates: exit 1, "+refusal+"; the aggregate still "+s.own)
}
