package reconciler

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// gateRef lets our server ask a reconciler built after it.
type gateRef struct{ r atomic.Pointer[Reconciler] }

func (g *gateRef) OwnerNovaGateOpen() bool {
	r := g.r.Load()
	return r != nil && r.OwnerNovaGateOpen()
}

// startOursWithPrefilter starts our server with the pre-filter on auto,
// following gate, for the scheduler user "nova".
func startOursWithPrefilter(t *testing.T, gate *gateRef) *placementtest.Server {
	t.Helper()
	return placementtest.StartOurs(t, placementtest.Options{OwnerNovaGate: gate, SchedulerUsers: []string{"nova"}})
}

// TestOwnerGate_NovaDouble: one old compute keeps the gate closed and
// nothing is stamped (and our pre-filter stays off); upgrading it opens
// the gate, Nova's providers are stamped, OWNER_CYBORG ones never, and
// our server then filters the scheduler's candidates.
func TestOwnerGate_NovaDouble(t *testing.T) {
	t.Parallel()
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			gate := &gateRef{}
			var srv *placementtest.Server
			if kind == placementtest.Ours {
				srv = startOursWithPrefilter(t, gate)
			} else {
				srv = placementtest.StartReference(t)
			}
			c, err := placementclient.New(ctx, placementclient.Options{Endpoint: srv.URL, Token: srv.Token})
			if err != nil {
				t.Fatal(err)
			}
			e := &env{srv: srv, pl: FromClient(c), nova: newNovaDouble(t), client: c}
			var (
				cn1, cn2, oldNode = uuidN("c0000000", 1), uuidN("c0000000", 2), uuidN("c0000000", 3)
				cyborgRoot, fpga  = uuidN("cb000000", 1), uuidN("cb000000", 2)
			)
			e.provider(t, cn1, "cn1", "", "COMPUTE_NODE")
			e.provider(t, cn2, "cn2", "", "COMPUTE_NODE")
			e.provider(t, oldNode, "old-node", "") // a compute node reporting no traits
			e.provider(t, cyborgRoot, "cyborg-box", "", "COMPUTE_NODE", "OWNER_CYBORG")
			e.provider(t, fpga, "cn1-fpga0", cn1, "OWNER_CYBORG")
			for _, p := range []string{cn1, cn2, cyborgRoot} {
				e.srv.MustDo(t, 200, "PUT", "/resource_providers/"+p+"/inventories", "1.39",
					map[string]any{"resource_provider_generation": 1, "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}})
			}
			e.nova.set(nil, []novaclient.ComputeNode{{UUID: cn1, Host: "cn1"}, {UUID: cn2, Host: "cn2"}, {UUID: oldNode, Host: "old"}})

			r, err := New(Options{Placement: e.pl, Nova: e.nova.source(), Jobs: map[string]string{JobOwnerTraits: "@every 1h"},
				Logger: zaptest.NewLogger(t), Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			gate.r.Store(r)
			candidates := func() int {
				st, b := doAs(t, e.srv, "nova", "/allocation_candidates?resources=VCPU:1")
				if st != 200 {
					t.Fatalf("candidates as nova: %d %s", st, b)
				}
				var doc struct {
					AllocationRequests []any `json:"allocation_requests"`
				}
				_ = json.Unmarshal(b, &doc)
				return len(doc.AllocationRequests)
			}

			// Nova (os-services) lists cn1, cn2 and old; versions come
			// from the heartbeats, and "old" sends none.
			if err := r.RefreshComputes(ctx); err != nil {
				t.Fatal(err)
			}
			for _, h := range []ServiceRecord{{Host: "cn1", Binary: ComputeBinary, Version: 73}, {Host: "cn2", Binary: ComputeBinary, Version: 72}} {
				if err := r.heartbeat(h, true); err != nil {
					t.Fatal(err)
				}
			}
			if g := r.Gate(); g.Open || !slices.Equal(g.Behind, []string{"cn2"}) || !slices.Equal(g.Unknown, []string{"old"}) {
				t.Fatalf("gate with an old compute and one without a version: %+v", g)
			}
			rec, err := r.RunJob(ctx, JobOwnerTraits)
			if err != nil || rec.Changes != 0 {
				t.Fatalf("closed gate run: %+v, %v", rec, err)
			}
			for _, p := range []string{cn1, cn2, oldNode} {
				if slices.Contains(e.traits(t, p), TraitOwnerNova) {
					t.Fatalf("%s stamped while the gate is closed", p)
				}
			}
			if kind == placementtest.Ours {
				if n := candidates(); n != 3 {
					t.Fatalf("gate closed: %d candidates, want 3 (pre-filter off)", n)
				}
			}

			if err := r.heartbeat(ServiceRecord{Host: "cn2", Binary: ComputeBinary, Version: 73}, true); err != nil {
				t.Fatal(err)
			}
			if g := r.Gate(); g.Open || !slices.Equal(g.Unknown, []string{"old"}) {
				t.Fatalf("gate open while a listed compute has no version: %+v", g)
			}
			if err := r.heartbeat(ServiceRecord{Host: "old", Binary: ComputeBinary, Version: 73}, true); err != nil {
				t.Fatal(err)
			}
			if g := r.Gate(); !g.Open || g.PrefilterOn {
				t.Fatalf("after the upgrade: %+v, want open with the pre-filter still off (nothing stamped yet)", g)
			}
			if kind == placementtest.Ours {
				// Open but unstamped: the pre-filter waits, the list stays full.
				if n := candidates(); n != 3 {
					t.Fatalf("gate open, nothing stamped: %d candidates, want 3", n)
				}
			}
			rec, err = r.RunJob(ctx, JobOwnerTraits)
			if err != nil || rec.Changes != 3 {
				t.Fatalf("open gate run: %+v, %v", rec, err)
			}
			for _, p := range []string{cn1, cn2, oldNode} {
				if !slices.Contains(e.traits(t, p), TraitOwnerNova) {
					t.Fatalf("%s not stamped", p)
				}
			}
			if got := e.traits(t, cn1); !slices.Contains(got, "COMPUTE_NODE") {
				t.Fatalf("stamping lost cn1's traits: %v", got)
			}
			for _, p := range []string{cyborgRoot, fpga} {
				if slices.Contains(e.traits(t, p), TraitOwnerNova) {
					t.Fatalf("OWNER_CYBORG provider %s stamped", p)
				}
			}
			if !r.Gate().PrefilterOn {
				t.Fatalf("stamped, but the pre-filter is off: %+v", r.Gate())
			}
			if rec, _ = r.RunJob(ctx, JobOwnerTraits); rec.Changes != 0 || rec.Drift != 0 {
				t.Fatalf("second stamping run: %+v", rec)
			}
			if kind == placementtest.Ours {
				if n := candidates(); n != 2 {
					t.Fatalf("gate open: %d candidates, want 2 (cyborg-box filtered out)", n)
				}
			}
		})
	}
}

// doAs sends GET path as user (admin role) and returns status and body.
func doAs(t *testing.T, srv *placementtest.Server, user, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", user)
	req.Header.Set("X-Roles", "admin,service")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
