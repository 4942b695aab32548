package placementsrv

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

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
			urls := make([]string, n)
			for i := range urls {
				urls[i] = startReplica(b, s, db)
			}
			const providers = 200
			seedReportProviders(b, urls[0], providers)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			var next atomic.Int64
			b.SetParallelism(4) // 8 clients on 2 CPUs
			before := serverStatus(b, s, db)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := next.Add(1)
				url := urls[int(id)%n]
				rng := rand.New(rand.NewPCG(uint64(id), 7))
				for pb.Next() {
					if err := reportOnce(client, url, rng.IntN(providers), rng.IntN(4)); err != nil {
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
// the duration of the benchmark, and returns its base URL.
func startReplica(b *testing.B, s *mariadbtest.Server, db string) string {
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
	srv, err := New(Options{Store: l})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, 5*time.Second) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("server: %v", err)
		}
		<-followed
		_ = l.Close()
	})
	return "http://" + ln.Addr().String()
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
func seedReportProviders(b *testing.B, url string, n int) {
	b.Helper()
	c := http.DefaultClient
	for i := range n {
		u := reportUUID(i)
		if _, err := call1(c, "POST", url+"/resource_providers", map[string]any{"uuid": u, "name": u}, 200); err != nil {
			b.Fatal(err)
		}
		inv := func(total int) map[string]any { return map[string]any{"total": total} }
		body := map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{
			"VCPU": inv(64), "MEMORY_MB": inv(262144), "DISK_GB": inv(2048)}}
		if _, err := call1(c, "PUT", url+"/resource_providers/"+u+"/inventories", body, 200); err != nil {
			b.Fatal(err)
		}
	}
}

// reportOnce reads provider i's inventories and writes them back with
// VCPU reserved set to reserved; a generation conflict with another
// client is an answer, not an error.
func reportOnce(c *http.Client, url string, i, reserved int) error {
	path := url + "/resource_providers/" + reportUUID(i) + "/inventories"
	body, err := call1(c, "GET", path, nil, 200)
	if err != nil {
		return err
	}
	var doc struct {
		Generation  int64                     `json:"resource_provider_generation"`
		Inventories map[string]map[string]any `json:"inventories"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	doc.Inventories["VCPU"]["reserved"] = reserved
	if _, err := call1(c, "PUT", path, doc, 200, 409); err != nil {
		return err
	}
	return nil
}

// call1 sends one request at microversion 1.39 as admin and reads the
// answer, an error unless its status is one of want.
func call1(c *http.Client, method, url string, body any, want ...int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		bs, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(bs)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, out)
}
