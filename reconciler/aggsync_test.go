package reconciler

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

var fastRetry = backoff.Policy{Attempts: 5, Base: time.Millisecond, Cap: 5 * time.Millisecond}

// TestAggregateSync_NovaDouble runs the aggregate mirroring scenarios
// against our server and the reference Placement 8.0.0.
func TestAggregateSync_NovaDouble(t *testing.T) {
	t.Parallel()
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testAggregateScenarios(t, kind)
		})
	}
}

func testAggregateScenarios(t *testing.T, kind string) {
	ctx := context.Background()
	e := newEnv(t, kind)
	var (
		agA, agB, opAgg = uuidN("aaaaaaaa", 1), uuidN("aaaaaaaa", 2), uuidN("0ee00000", 1)
		h1, h2          = uuidN("11111111", 1), uuidN("11111111", 2)
		ironic          = []string{uuidN("33333333", 1), uuidN("33333333", 2), uuidN("33333333", 3)}
		ghost           = uuidN("44444444", 1) // a compute node with no provider
		sharing         = uuidN("55555555", 1)
	)
	e.provider(t, h1, "h1", "", "COMPUTE_NODE")
	e.provider(t, h2, "h2", "", "COMPUTE_NODE")
	for i, u := range ironic {
		e.provider(t, u, "node-"+string(rune('a'+i)), "", "COMPUTE_NODE")
	}
	e.provider(t, sharing, "shared-storage", "")
	// The operator's placement-only aggregate: on h1 and a sharing
	// provider, and also the sharing provider put into Nova's agA.
	e.setAggregates(t, h1, opAgg)
	e.setAggregates(t, sharing, opAgg, agA)

	nodes := []novaclient.ComputeNode{{UUID: h1, Hostname: "h1", Host: "h1"}, {UUID: h2, Hostname: "h2", Host: "h2"}, {UUID: ghost, Hostname: "ghost", Host: "ghost"}}
	for i, u := range ironic {
		nodes = append(nodes, novaclient.ComputeNode{UUID: u, Hostname: "node-" + string(rune('a'+i)), Host: "ironic"})
	}
	e.nova.set([]novaclient.Aggregate{
		{UUID: agA, Name: "agA", Hosts: []string{"h1", "ironic"}},
		{UUID: agB, Name: "agB", Hosts: []string{"h2", "ghost"}},
	}, nodes)

	state, err := OpenStateFile(filepath.Join(t.TempDir(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	sync := &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Logger: zaptest.NewLogger(t), Retry: fastRetry}

	t.Run("dry run writes nothing", func(t *testing.T) {
		e.proxy.Reset()
		res, err := sync.Run(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if e.proxy.Writes() != 0 || len(res.Plan.Changes) != 5 {
			t.Fatalf("writes %d, planned changes %d (want 0, 5)", e.proxy.Writes(), len(res.Plan.Changes))
		}
		if got := e.aggregates(t, h2); len(got) != 0 {
			t.Fatalf("h2 has %v after a dry run", got)
		}
		if a, _ := state.Ownership(); len(a) != 0 {
			t.Fatalf("dry run remembered ownership %v", a)
		}
	})

	t.Run("first run converges; ironic host maps all nodes; host without provider reported", func(t *testing.T) {
		e.proxy.Reset()
		res, err := sync.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("first run: %d requests, %d writes, strategy %s", e.proxy.Total(), e.proxy.Writes(), res.Strategy)
		// The reference on SQLite may answer a concurrent write with 500
		// "database is locked"; that write is re-read and retried, so the
		// proxy can see more PUTs than the writes that succeeded.
		if res.Writes() != 5 || res.Changes() != 5 || e.proxy.Writes() < 5 {
			t.Fatalf("writes %d (proxy %d), changes %d (want 5, 5)", res.Writes(), e.proxy.Writes(), res.Changes())
		}
		want := map[string][]string{h1: {agA, opAgg}, h2: {agB}, ironic[0]: {agA}, ironic[1]: {agA}, ironic[2]: {agA}, sharing: {agA, opAgg}}
		for p, w := range want {
			if got := e.aggregates(t, p); !sameSet(got, w) {
				t.Errorf("provider %s: aggregates %v, want %v", p, got, w)
			}
		}
		if len(res.Plan.Unmapped) != 1 || res.Plan.Unmapped[0].Host != "ghost" || res.Plan.Unmapped[0].MissingProviders[0] != ghost {
			t.Fatalf("unmapped = %+v", res.Plan.Unmapped)
		}
	})

	t.Run("second run makes no writes", func(t *testing.T) {
		e.proxy.Reset()
		res, err := sync.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if e.proxy.Writes() != 0 || len(res.Plan.Changes) != 0 || res.Plan.InSync != 5 {
			t.Fatalf("writes %d, changes %d, in sync %d", e.proxy.Writes(), len(res.Plan.Changes), res.Plan.InSync)
		}
		t.Logf("steady run: %d requests", e.proxy.Total())
	})

	t.Run("host removed from a Nova aggregate loses it; operator aggregate untouched", func(t *testing.T) {
		e.nova.set([]novaclient.Aggregate{
			{UUID: agA, Name: "agA", Hosts: []string{"ironic"}},
			{UUID: agB, Name: "agB", Hosts: []string{"h2", "ghost"}},
		}, nodes)
		e.proxy.Reset()
		res, err := sync.Run(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.aggregates(t, h1); !sameSet(got, []string{opAgg}) {
			t.Fatalf("h1 aggregates %v, want only the operator's", got)
		}
		if got := e.aggregates(t, sharing); !sameSet(got, []string{opAgg, agA}) {
			t.Fatalf("sharing provider aggregates %v changed", got)
		}
		if res.Writes() != 1 || e.proxy.Writes() != 1 {
			t.Fatalf("writes %d (proxy %d), want 1", res.Writes(), e.proxy.Writes())
		}
	})

	t.Run("aggregate deleted from Nova is removed from its hosts (ownership remembered)", func(t *testing.T) {
		e.nova.set([]novaclient.Aggregate{{UUID: agA, Name: "agA", Hosts: []string{"ironic"}}}, nodes)
		// A fresh StateFile from the same path: ownership survives restarts.
		reopened, err := OpenStateFile(state.path)
		if err != nil {
			t.Fatal(err)
		}
		s2 := *sync
		s2.State = reopened
		if _, err := s2.Run(ctx, false); err != nil {
			t.Fatal(err)
		}
		if got := e.aggregates(t, h2); len(got) != 0 {
			t.Fatalf("h2 still has %v", got)
		}
		if owned, _ := reopened.Ownership(); !sameSet(owned, []string{agA}) {
			t.Fatalf("owned after the removal = %v, want only agA", owned)
		}
	})

	t.Run("nova unreachable fails visibly and writes nothing", func(t *testing.T) {
		e.nova.setDown(true)
		defer e.nova.setDown(false)
		e.proxy.Reset()
		_, err := sync.Run(ctx, false)
		if !errors.Is(err, novaclient.ErrUnavailable) {
			t.Fatalf("err = %v, want novaclient.ErrUnavailable", err)
		}
		if e.proxy.Total() != 0 {
			t.Fatalf("%d placement requests with Nova down", e.proxy.Total())
		}
	})

	t.Run("placement down fails visibly", func(t *testing.T) {
		e.nova.set([]novaclient.Aggregate{{UUID: agA, Name: "agA", Hosts: []string{"ironic", "h1"}}}, nodes)
		e.proxy.SetMode(placementtest.Unavailable)
		defer e.proxy.SetMode(placementtest.Pass)
		_, err := sync.Run(ctx, false)
		if !errors.Is(err, ErrPlacement) {
			t.Fatalf("err = %v, want ErrPlacement", err)
		}
		if got := e.aggregates(t, h1); !sameSet(got, []string{opAgg}) {
			t.Fatalf("h1 changed while placement was down: %v", got)
		}
	})
}

// TestAggregateSync_ConcurrentWriter bumps each provider's generation
// just before the reconciler's first write to it: every write meets a
// 409, re-reads and converges, and the conflicts are counted.
func TestAggregateSync_ConcurrentWriter(t *testing.T) {
	t.Parallel()
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, kind)
			ag := uuidN("aaaaaaaa", 9)
			var nodes []novaclient.ComputeNode
			for i := range 4 {
				u := uuidN("66666666", i)
				e.provider(t, u, "c"+u[len(u)-2:], "", "COMPUTE_NODE")
				nodes = append(nodes, novaclient.ComputeNode{UUID: u, Host: "c" + u[len(u)-2:]})
			}
			hosts := make([]string, len(nodes))
			for i, n := range nodes {
				hosts[i] = n.Host
			}
			e.nova.set([]novaclient.Aggregate{{UUID: ag, Name: "ag", Hosts: hosts}}, nodes)

			var mu sync.Mutex
			bumped := map[string]bool{}
			e.proxy.SetBefore(func(r *http.Request) {
				if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/aggregates") {
					return
				}
				p := strings.Split(r.URL.Path, "/")[2]
				mu.Lock()
				first := !bumped[p]
				bumped[p] = true
				mu.Unlock()
				if first { // another writer changes the provider's traits
					// Not MustDo: this runs on the proxy's goroutine.
					gen, _ := e.srv.Traits(t, p)
					e.srv.Do(t, "PUT", "/resource_providers/"+p+"/traits", "1.39",
						map[string]any{"resource_provider_generation": gen, "traits": []string{"COMPUTE_NODE", "HW_CPU_X86_AVX"}})
				}
			})
			state, _ := OpenStateFile("")
			s := &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Logger: zaptest.NewLogger(t), Retry: fastRetry}
			res, err := s.Run(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Conflicts != 4 || res.GiveUps != 0 || res.Writes() != 4 {
				t.Fatalf("conflicts %d, give-ups %d, writes %d (want 4, 0, 4)", res.Conflicts, res.GiveUps, res.Writes())
			}
			for _, n := range nodes {
				if got := e.aggregates(t, n.UUID); !sameSet(got, []string{ag}) {
					t.Fatalf("%s: %v", n.UUID, got)
				}
				if got := e.traits(t, n.UUID); len(got) != 2 {
					t.Fatalf("the other writer's traits were lost on %s: %v", n.UUID, got)
				}
			}
		})
	}
}
