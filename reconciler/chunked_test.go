package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// memberOfLog records the uuid lists of the member_of=in: listings the
// proxy forwards.
type memberOfLog struct {
	mu     sync.Mutex
	chunks [][]string
}

func logMemberOf(p *placementtest.Proxy) *memberOfLog {
	l := &memberOfLog{}
	p.SetBefore(func(r *http.Request) {
		v, ok := strings.CutPrefix(r.URL.Query().Get("member_of"), "in:")
		if r.Method != http.MethodGet || r.URL.Path != "/resource_providers" || !ok {
			return
		}
		l.mu.Lock()
		l.chunks = append(l.chunks, strings.Split(v, ","))
		l.mu.Unlock()
	})
	return l
}

func (l *memberOfLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.chunks
	l.chunks = nil
	return out
}

// checkChunks asserts that the listings asked about exactly the owned
// aggregates, each once, in lists of at most maxUUIDsPerQuery, as few as
// that allows.
func checkChunks(t *testing.T, chunks [][]string, owned []string) {
	t.Helper()
	var all []string
	for _, c := range chunks {
		if len(c) > maxUUIDsPerQuery {
			t.Errorf("a member_of=in: listing with %d uuids (max %d)", len(c), maxUUIDsPerQuery)
		}
		all = append(all, c...)
	}
	slices.Sort(all)
	if !slices.Equal(all, owned) {
		t.Errorf("listings asked about %d uuids, want the %d owned aggregates once each", len(all), len(owned))
	}
	if want := (len(owned) + maxUUIDsPerQuery - 1) / maxUUIDsPerQuery; len(chunks) != want {
		t.Errorf("%d member_of=in: listings for %d owned aggregates, want %d", len(chunks), len(owned), want)
	}
}

// TestAggregateSync_ChunkedMemberOf forces the by-provider read (many
// more owned aggregates than compute nodes), whose member_of=in: lists
// are chunked, and checks that it converges, stays idempotent, removes
// what Nova no longer has and leaves the operator's aggregate alone —
// against both servers.
func TestAggregateSync_ChunkedMemberOf(t *testing.T) {
	t.Parallel()
	const aggs = 4*maxUUIDsPerQuery + 20 // five listings, the last one short
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t, kind)
			// h3 is in no aggregate: a listing whose filter was lost would
			// name it as a holder.
			hosts := []string{uuidN("c0c0c0c0", 0), uuidN("c0c0c0c0", 1), uuidN("c0c0c0c0", 2), uuidN("c0c0c0c0", 3)}
			var nodes []novaclient.ComputeNode
			for i, u := range hosts {
				e.provider(t, u, fmt.Sprintf("h%d", i), "", "COMPUTE_NODE")
				nodes = append(nodes, novaclient.ComputeNode{UUID: u, Hostname: fmt.Sprintf("h%d", i), Host: fmt.Sprintf("h%d", i)})
			}
			opAgg := uuidN("0ee00000", 7)
			e.setAggregates(t, hosts[0], opAgg)
			novaAggs := make([]novaclient.Aggregate, aggs)
			want := map[string][]string{hosts[0]: {opAgg}}
			var owned []string
			for i := range aggs {
				a := novaclient.Aggregate{UUID: uuidN("ddddddd0", i), Name: fmt.Sprintf("agg%03d", i), Hosts: []string{nodes[i%3].Host}}
				novaAggs[i] = a
				owned = append(owned, a.UUID)
				want[hosts[i%3]] = append(want[hosts[i%3]], a.UUID)
			}
			slices.Sort(owned)
			e.nova.set(novaAggs, nodes)
			log := logMemberOf(e.proxy)
			state, _ := OpenStateFile("")
			// The removal run below deletes a third of Nova's aggregates on
			// purpose: allow it, the removal limit has its own tests.
			s := &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Logger: zaptest.NewLogger(t), Retry: fastRetry,
				MaxRemovals: &removallimit.Limit{N: 100, Percent: true}}

			res, err := s.Run(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != "by-provider" || res.Writes() != 3 || res.Changes() != aggs {
				t.Fatalf("first run: strategy %s, %d writes, %d changes (want by-provider, 3, %d)", res.Strategy, res.Writes(), res.Changes(), aggs)
			}
			checkChunks(t, log.take(), owned)
			for p, w := range want {
				if got := e.aggregates(t, p); !sameSet(got, w) {
					t.Errorf("provider %s: %d aggregates, want %d", p, len(got), len(w))
				}
			}

			e.proxy.Reset()
			res, err = s.Run(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if e.proxy.Writes() != 0 || res.Plan.InSync != 3 {
				t.Fatalf("second run: %d writes, %d in sync (want 0, 3)", e.proxy.Writes(), res.Plan.InSync)
			}
			checkChunks(t, log.take(), owned)
			// Version discovery at most, the provider list, the chunks and
			// one aggregate read per holder.
			if got, max := e.proxy.Total(), 2+len(chunks(owned, maxUUIDsPerQuery))+3; got > max {
				t.Errorf("second run: %d requests, want at most %d", got, max)
			}

			// Nova deletes the aggregates of h1: still owned (remembered),
			// so still asked about, and removed from h1 only.
			var kept []novaclient.Aggregate
			for i, a := range novaAggs {
				if i%3 != 1 {
					kept = append(kept, a)
				}
			}
			e.nova.set(kept, nodes)
			res, err = s.Run(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != "by-provider" || res.Writes() != 1 || res.Changes() != len(want[hosts[1]]) {
				t.Fatalf("removal run: strategy %s, %d writes, %d changes", res.Strategy, res.Writes(), res.Changes())
			}
			checkChunks(t, log.take(), owned)
			if got := e.aggregates(t, hosts[1]); len(got) != 0 {
				t.Errorf("h1 keeps %d aggregates Nova deleted", len(got))
			}
			if got := e.aggregates(t, hosts[0]); !sameSet(got, want[hosts[0]]) {
				t.Errorf("h0 (with the operator's aggregate) changed: %d aggregates", len(got))
			}
		})
	}
}
