package reconciler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The cost of mirroring H hosts in A aggregates (H > A, so memberships
// are read one listing per aggregate):
//
//	first run:  at most 2 + A + 2H requests (versions, the provider list,
//	            A listings, then a read and a write per provider)
//	steady run: at most 2 + A requests and no write
//
// TestAggregateSync_Efficiency checks these bounds at a size the default
// test run affords; BenchmarkAggregateSync measures 1000 hosts in 50
// aggregates against both servers:
//
//	go test -run '^$' -bench BenchmarkAggregateSync -benchtime 1x ./reconciler/
//
// (add -race to see the cost under the race detector; most of the time is
// the reference's first run).

// efficiencyRun is one measured run.
type efficiencyRun struct {
	res      *AggregateResult
	requests int
	gets     int
	puts     int
	took     time.Duration
}

// efficiencySetup creates hosts providers and a Nova of hosts in aggs
// aggregates on a fresh server of kind.
func efficiencySetup(tb testing.TB, kind string, hosts, aggs int) (*env, *AggregateSync) {
	tb.Helper()
	e := newEnv(tb, kind)
	nodes := make([]novaclient.ComputeNode, hosts)
	members := make([][]string, aggs)
	for i := range hosts {
		nodes[i] = novaclient.ComputeNode{UUID: uuidN("e0000000", i), Hostname: fmt.Sprintf("cn%04d", i), Host: fmt.Sprintf("cn%04d", i)}
		members[i%aggs] = append(members[i%aggs], nodes[i].Host)
	}
	createProviders(tb, e.srv, nodes)
	novaAggs := make([]novaclient.Aggregate, aggs)
	for i := range aggs {
		novaAggs[i] = novaclient.Aggregate{UUID: uuidN("a0000000", i), Name: fmt.Sprintf("agg%02d", i), Hosts: members[i]}
	}
	e.nova.set(novaAggs, nodes)
	state, _ := OpenStateFile("")
	return e, &AggregateSync{Nova: e.nova.source(), Placement: e.pl, State: state, Retry: fastRetry}
}

func measureRun(tb testing.TB, e *env, s *AggregateSync) efficiencyRun {
	tb.Helper()
	e.proxy.Reset()
	start := time.Now()
	res, err := s.Run(context.Background(), false)
	took := time.Since(start)
	if err != nil {
		tb.Fatal(err)
	}
	c := e.proxy.Counts()
	return efficiencyRun{res: res, requests: e.proxy.Total(), gets: c["GET"], puts: c["PUT"], took: took}
}

// checkEfficiency asserts the first and steady runs converge within the
// request bounds above.
func checkEfficiency(tb testing.TB, kind string, hosts, aggs int, first, steady efficiencyRun) {
	tb.Helper()
	if first.res.Writes() != hosts || first.res.Strategy != "by-aggregate" {
		tb.Fatalf("%s first run: %d providers written (want %d), read %s", kind, first.res.Writes(), hosts, first.res.Strategy)
	}
	// The reference on SQLite may answer a write with 500 "database is
	// locked"; the write is re-read and retried, costing two requests.
	retries := first.puts - hosts
	if max := 2 + aggs + 2*hosts + 2*retries; first.requests > max {
		tb.Errorf("%s first run: %d requests, want at most %d", kind, first.requests, max)
	}
	if kind == placementtest.Ours && retries != 0 {
		tb.Errorf("ours: %d PUTs for %d providers", first.puts, hosts)
	}
	if steady.puts != 0 || steady.res.Plan.InSync != hosts || len(steady.res.Plan.Changes) != 0 {
		tb.Fatalf("%s steady run: %d PUTs, %d in sync (want 0, %d)", kind, steady.puts, steady.res.Plan.InSync, hosts)
	}
	if max := 2 + aggs; steady.requests > max {
		tb.Errorf("%s steady run: %d requests, want at most %d", kind, steady.requests, max)
	}
}

// TestAggregateSync_Efficiency mirrors 120 hosts in 12 aggregates against
// both servers and checks the request bounds of the first and the
// steady-state run.
func TestAggregateSync_Efficiency(t *testing.T) {
	t.Parallel()
	const hosts, aggs = 120, 12
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e, s := efficiencySetup(t, kind, hosts, aggs)
			first := measureRun(t, e, s)
			steady := measureRun(t, e, s)
			for name, r := range map[string]efficiencyRun{"first": first, "steady": steady} {
				t.Logf("%s, %d hosts in %d aggregates, %s run: %d requests (GET %d, PUT %d), %s",
					kind, hosts, aggs, name, r.requests, r.gets, r.puts, r.took.Round(time.Millisecond))
			}
			checkEfficiency(t, kind, hosts, aggs, first, steady)
		})
	}
}

// BenchmarkAggregateSync measures the first and the steady-state run of
// 1000 hosts in 50 aggregates against each server, reporting requests
// and milliseconds per run (each iteration starts from a fresh server).
func BenchmarkAggregateSync(b *testing.B) {
	const hosts, aggs = 1000, 50
	for _, kind := range placementtest.Kinds() {
		b.Run(kind, func(b *testing.B) {
			var firstReq, firstMS, steadyReq, steadyMS float64
			for range b.N {
				b.StopTimer()
				e, s := efficiencySetup(b, kind, hosts, aggs)
				b.StartTimer()
				first := measureRun(b, e, s)
				steady := measureRun(b, e, s)
				b.StopTimer()
				checkEfficiency(b, kind, hosts, aggs, first, steady)
				firstReq += float64(first.requests)
				firstMS += float64(first.took) / float64(time.Millisecond)
				steadyReq += float64(steady.requests)
				steadyMS += float64(steady.took) / float64(time.Millisecond)
			}
			n := float64(b.N)
			b.ReportMetric(firstReq/n, "first-requests/op")
			b.ReportMetric(firstMS/n, "first-ms/op")
			b.ReportMetric(steadyReq/n, "steady-requests/op")
			b.ReportMetric(steadyMS/n, "steady-ms/op")
		})
	}
}

// createProviders creates one root provider per node directly on the
// server, a few at a time.
func createProviders(t testing.TB, srv *placementtest.Server, nodes []novaclient.ComputeNode) {
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
