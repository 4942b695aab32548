package reconciler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/placementtest"
)

// TestAggregateSync_Efficiency mirrors 1000 hosts in 50 aggregates and
// logs the requests and time of the first and the steady-state run
// against both servers.
func TestAggregateSync_Efficiency(t *testing.T) {
	const hosts, aggs = 1000, 50
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, kind)
			nodes := make([]ComputeNode, hosts)
			members := make([][]string, aggs)
			for i := range hosts {
				nodes[i] = ComputeNode{UUID: uuidN("e0000000", i), Hostname: fmt.Sprintf("cn%04d", i), Host: fmt.Sprintf("cn%04d", i)}
				members[i%aggs] = append(members[i%aggs], nodes[i].Host)
			}
			createProviders(t, e.srv, nodes)
			novaAggs := make([]NovaAggregate, aggs)
			for i := range aggs {
				novaAggs[i] = NovaAggregate{UUID: uuidN("a0000000", i), Name: fmt.Sprintf("agg%02d", i), Hosts: members[i]}
			}
			e.nova.set(novaAggs, nodes)
			state, _ := OpenStateFile("")
			s := &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Retry: fastRetry}

			for _, run := range []string{"first", "steady"} {
				e.proxy.Reset()
				start := time.Now()
				res, err := s.Run(ctx, false)
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				c := e.proxy.Counts()
				t.Logf("%s, %s run: %d requests (GET %d, PUT %d), %d providers written, %d in sync, read %s, %s",
					kind, run, e.proxy.Total(), c["GET"], c["PUT"], res.Writes(), res.Plan.InSync, res.Strategy, took.Round(time.Millisecond))
				if run == "first" && res.Writes() != hosts {
					t.Fatalf("first run wrote %d providers, want %d", res.Writes(), hosts)
				}
				if run == "steady" && (e.proxy.Writes() != 0 || res.Plan.InSync != hosts) {
					t.Fatalf("steady run: %d writes, %d in sync", e.proxy.Writes(), res.Plan.InSync)
				}
			}
		})
	}
}

// createProviders creates one root provider per node directly on the
// server, a few at a time.
func createProviders(t testing.TB, srv *placementtest.Server, nodes []ComputeNode) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, len(nodes))
	sem := make(chan struct{}, 4)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for try := 0; try < 5; try++ {
				st, b := srv.Do(t, "POST", "/resource_providers", "1.39", map[string]any{"uuid": n.UUID, "name": n.Hostname})
				if st == 200 || st == 409 {
					return
				}
				if try == 4 {
					errs <- fmt.Sprintf("create %s: %d %s", n.Hostname, st, b)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
