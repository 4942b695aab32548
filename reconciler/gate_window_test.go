package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// TestGate_OpeningNeverEmptiesCandidates is Why §1's last case: 200
// Nova compute nodes without OWNER_NOVA; the gate opens on the upgrade
// of the last compute. The pre-filter (auto) must wait for the stamping
// that the opening triggers, so user nova never sees an empty candidate
// list, and afterwards it filters. The window between the opening and
// the pre-filter is logged, not asserted.
func TestGate_OpeningNeverEmptiesCandidates(t *testing.T) {
	// Not parallel: it is heavy, and the package's timing tests share
	// the machine with it.
	const nodes = 200
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := &gateRef{}
	srv := startOursWithPrefilter(t, gate)
	c, err := placementclient.New(ctx, placementclient.Options{Endpoint: srv.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{srv: srv, pl: FromClient(c), nova: newNovaDouble(t), client: c}
	var cns []novaclient.ComputeNode
	for i := range nodes {
		u := uuidN("c1c1c1c1", i)
		e.provider(t, u, fmt.Sprintf("node-%03d", i), "", "COMPUTE_NODE")
		e.srv.MustDo(t, 200, "PUT", "/resource_providers/"+u+"/inventories", "1.39",
			map[string]any{"resource_provider_generation": 1, "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}})
		cns = append(cns, novaclient.ComputeNode{UUID: u, Hostname: fmt.Sprintf("node-%03d", i), Host: "conductor"})
	}
	cyborg := uuidN("cbcbcbcb", 1)
	e.provider(t, cyborg, "cyborg-box", "", "OWNER_CYBORG")
	e.srv.MustDo(t, 200, "PUT", "/resource_providers/"+cyborg+"/inventories", "1.39",
		map[string]any{"resource_provider_generation": 1, "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}})
	e.nova.set(nil, cns)

	r, err := New(Options{Placement: e.pl, Nova: e.nova.source(), Jobs: map[string]string{JobOwnerTraits: "@every 1h"},
		Logger: zaptest.NewLogger(t), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	gate.r.Store(r)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if err := r.heartbeat(ServiceRecord{Host: "conductor", Binary: ComputeBinary, Version: 72}, true); err != nil {
		t.Fatal(err)
	}
	if err := r.RefreshComputes(ctx); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		st, b := doAs(t, srv, "nova", "/allocation_candidates?resources=VCPU:1")
		var doc struct {
			AllocationRequests []any `json:"allocation_requests"`
		}
		if st != 200 || json.Unmarshal(b, &doc) != nil {
			t.Errorf("candidates as nova: %d %s", st, b)
		}
		return len(doc.AllocationRequests)
	}
	if n := count(); n != nodes+1 {
		t.Fatalf("gate closed: %d candidates, want %d (no filter)", n, nodes+1)
	}

	// Poll as the scheduler would while the gate opens.
	var mu sync.Mutex
	var seen []int
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := count()
			mu.Lock()
			seen = append(seen, n)
			mu.Unlock()
		}
	}()
	if err := r.heartbeat(ServiceRecord{Host: "conductor", Binary: ComputeBinary, Version: 73}, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for !r.Gate().PrefilterOn {
		select {
		case <-deadline:
			t.Fatalf("pre-filter never turned on: %+v", r.Gate())
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(stop)
	<-polled
	g := r.Gate()
	if n := count(); n != nodes {
		t.Fatalf("pre-filter on: %d candidates, want %d (Nova's, the Cyborg box out)", n, nodes)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || slices.Min(seen) == 0 {
		t.Fatalf("an empty candidate list while the gate opened: %v", seen)
	}
	t.Logf("gate opened %s; pre-filter on %s later; %d candidate requests as nova meanwhile, fewest candidates %d",
		g.OpenedAt.Format(time.RFC3339Nano), g.PrefilterAt.Sub(g.OpenedAt), len(seen), slices.Min(seen))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
