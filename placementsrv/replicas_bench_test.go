package placementsrv

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// BenchmarkReportReplicas is nova-compute's inventory report (GET, then
// PUT with another reserved amount) from 8 clients, spread round-robin
// over 1 or 3 replicas sharing one MariaDB, with consistent reads on as
// serve runs them. It is the write path's cost with the feed: compare
// replicas=3 against replicas=1 of the same run, and profile it with
// -cpuprofile.
//
//	go test ./placementsrv -run '^$' -bench BenchmarkReportReplicas -benchtime 5s
func BenchmarkReportReplicas(b *testing.B) {
	s := mariadbtest.Start(b)
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			db := s.NewDatabase(b)
			replicas := make([]*testServer, n)
			for i := range replicas {
				replicas[i] = startReplica(b, s, db)
			}
			const providers = 200
			seedReportProviders(b, replicas[0], providers)
			// One client for all, keeping connections for 8 clients.
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			for _, r := range replicas {
				r.Client = client
			}
			var next atomic.Int64
			b.SetParallelism(4) // 8 clients on 2 CPUs
			before := serverStatus(b, s, db)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := next.Add(1)
				ts := replicas[int(id)%n]
				rng := rand.New(rand.NewPCG(uint64(id), 7))
				for pb.Next() {
					if err := reportOnce(ts, rng.IntN(providers), rng.IntN(4)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			after := serverStatus(b, s, db)
			for _, k := range []string{"Questions", "Com_commit"} {
				b.ReportMetric(float64(after[k]-before[k])/float64(b.N), k+"/op")
			}
		})
	}
}

// startReplica serves a replica's ledger on db, following the feed, for
// the duration of the benchmark.
func startReplica(b *testing.B, s *mariadbtest.Server, db string) *testServer {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	be, err := mysql.Open(ctx, s.Config(db), mysql.Options{Migrate: true})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	l, err := ledger.New(ctx, be, ledger.Options{})
	if err != nil {
		cancel()
		be.Close()
		b.Fatal(err)
	}
	l.SetConsistentReads(true)
	followed := make(chan struct{})
	go func() { defer close(followed); l.Follow(ctx, ledger.FollowOptions{}) }()
	return serveStore(b, l, func() {
		cancel()
		<-followed
		_ = l.Close()
	}, nil)
}

// serverStatus reads MariaDB's global statement counters.
func serverStatus(b *testing.B, s *mariadbtest.Server, db string) map[string]int64 {
	b.Helper()
	conn, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_commit')")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			b.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

func reportUUID(i int) string { return fmt.Sprintf("5e5e5e5e-0000-4000-8000-%012d", i) }

// seedReportProviders creates n providers with a compute node's classes.
func seedReportProviders(b *testing.B, ts *testServer, n int) {
	b.Helper()
	for i := range n {
		u := reportUUID(i)
		ts.must(b, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39",
			Body: fmt.Sprintf(`{"uuid": %q, "name": %q}`, u, u)})
		ts.must(b, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Version: "1.39",
			Body: `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 64}, "MEMORY_MB": {"total": 262144}, "DISK_GB": {"total": 2048}}}`})
	}
}

// reportOnce reads provider i's inventories and writes them back with
// VCPU reserved set to reserved; a generation conflict with another
// client is an answer, not an error. It runs on the benchmark's worker
// goroutines, so it returns errors instead of stopping the benchmark.
func reportOnce(ts *testServer, i, reserved int) error {
	path := "/resource_providers/" + reportUUID(i) + "/inventories"
	r, err := ts.send(call{Method: "GET", Path: path, Version: "1.39"})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("GET %s: status %d: %s", path, r.Status, r.Body)
	}
	var doc struct {
		Generation  int64                     `json:"resource_provider_generation"`
		Inventories map[string]map[string]any `json:"inventories"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	doc.Inventories["VCPU"]["reserved"] = reserved
	body, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode inventories: %w", err)
	}
	r, err = ts.send(call{Method: "PUT", Path: path, Version: "1.39", Body: string(body)})
	if err != nil {
		return err
	}
	if r.Status != 200 && r.Status != 409 {
		return fmt.Errorf("PUT %s: status %d: %s", path, r.Status, r.Body)
	}
	return nil
}
