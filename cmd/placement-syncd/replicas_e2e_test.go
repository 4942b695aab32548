package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// replicaSet is several `serve` processes on one MariaDB database.
type replicaSet struct {
	*daemontest.Replicas
	t    *testing.T
	db   *mariadbtest.Server
	name string
	url  string
	dir  string
}

// newReplicaSet makes a migrated MariaDB database for replicas.
func newReplicaSet(t *testing.T) *replicaSet {
	t.Helper()
	s := mariadbtest.Start(t)
	db := s.NewDatabase(t)
	set := &replicaSet{t: t, db: s, name: db, url: s.URL(db), dir: t.TempDir()}
	if r := syncd.Exec(t, set.dir, "db", "migrate", "--db", set.url); r.Code != exitOK {
		t.Fatalf("db migrate: %d %s", r.Code, r.Stderr)
	}
	return set
}

// startReplicaSet starts n replicas serving with extra arguments.
func startReplicaSet(t *testing.T, n int, extra ...string) *replicaSet {
	t.Helper()
	set := newReplicaSet(t)
	set.Replicas = syncd.StartReplicas(t, n, func(int) daemontest.Options {
		return daemontest.Options{Args: serveArgs(set.url, extra...)}
	})
	return set
}

// startLeading starts three replicas running the reconciler with leader
// election (lease_ttl ttl) and returns their reconciler addresses.
func (set *replicaSet) startLeading(t *testing.T, ttl time.Duration) []string {
	t.Helper()
	addrs := make([]string, 3)
	set.Replicas = syncd.StartReplicas(t, 3, func(i int) daemontest.Options {
		addrs[i] = freeAddr(t)
		cfg := filepath.Join(set.dir, fmt.Sprintf("replica%d.yaml", i))
		writeFile(t, cfg, fmt.Sprintf("reconciler:\n  enabled: true\n  listen: %q\n  state_file: %s\n  jobs:\n    aggregates: \"\"\n    owner_traits: \"@every 1h\"\n  leader:\n    lease_ttl: %s\n",
			addrs[i], filepath.Join(set.dir, fmt.Sprintf("state%d.json", i)), ttl))
		return daemontest.Options{Args: serveArgs(set.url, "--config", cfg)}
	})
	return addrs
}

// sql opens the database itself.
func (set *replicaSet) sql() *sql.DB {
	set.t.Helper()
	db, err := sql.Open("mysql", set.db.DSN(set.name))
	if err != nil {
		set.t.Fatal(err)
	}
	set.t.Cleanup(func() { db.Close() })
	return db
}

// TestE2E_ReplicaClaims has 16 clients claim one VCPU each through three
// replicas on one MariaDB against a capacity of 50: exactly 50 are
// granted, none over-allocated, no 5xx; every replica then shows 50 used.
func TestE2E_ReplicaClaims(t *testing.T) {
	t.Parallel()
	set := startReplicaSet(t, 3)
	const rp, capacity, claims, clients = "11111111-2222-4333-8444-555555555555", 50, 120, 16
	set.Get(0).API.At("1.20").MustDo(t, 200, "POST", "/resource_providers", `{"uuid":"`+rp+`","name":"rp"}`)
	set.Get(1).API.At("1.20").MustDo(t, 200, "PUT", "/resource_providers/"+rp+"/inventories", fmt.Sprintf(`{"resource_provider_generation":0,"inventories":{"VCPU":{"total":%d}}}`, capacity))
	var next atomic.Int64
	var mu sync.Mutex
	codes := map[int]int{}
	var odd []string // bodies of answers other than 204 and 409
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > claims {
					return
				}
				consumer := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i)
				r, _ := set.Get(int(i%3)).API.At("1.28").Do(context.Background(), "PUT", "/allocations/"+consumer,
					`{"allocations":{"`+rp+`":{"resources":{"VCPU":1}}},"project_id":"p","user_id":"u","consumer_generation":null}`)
				mu.Lock()
				codes[r.Code]++
				if r.Code != 204 && r.Code != 409 {
					odd = append(odd, fmt.Sprintf("replica %d: %d %s", i%3, r.Code, r.Body))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("answers by status: %v", codes)
	if codes[204] != capacity || codes[409] != claims-capacity || len(codes) != 2 {
		t.Fatalf("answers by status %v: want %d granted (204) and %d refused (409), nothing else; others: %v", codes, capacity, claims-capacity, odd)
	}
	var used int64
	if err := set.sql().QueryRow(`SELECT COALESCE(SUM(used), 0) FROM allocations`).Scan(&used); err != nil || used != capacity {
		t.Fatalf("the database holds %d used (%v), want %d", used, err, capacity)
	}
	for i := range set.Len() {
		r := set.Get(i)
		daemontest.Soon(t, fmt.Sprintf("replica %d's usage", i), func() error {
			b := r.API.At("1.20").MustDo(t, 200, "GET", "/resource_providers/"+rp+"/usages", nil).Body
			if !bytes.Contains(b, []byte(fmt.Sprintf(`"VCPU": %d`, capacity))) && !bytes.Contains(b, []byte(fmt.Sprintf(`"VCPU":%d`, capacity))) {
				return fmt.Errorf("usages %s", b)
			}
			return nil
		})
	}
}

// writeStream writes through the replicas from several clients until
// stop is closed: new traits and new consumers' claims, alternately. It
// returns what was acknowledged (201 or 204) and counts other answers.
type writeStream struct {
	mu     sync.Mutex
	acked  []string // "trait NAME" or "claim CONSUMER"
	codes  map[int]int
	next   atomic.Int64
	stop   chan struct{}
	done   sync.WaitGroup
	target func(i int64) *daemontest.Daemon
}

func startWriteStream(clients int, rp string, target func(i int64) *daemontest.Daemon) *writeStream {
	w := &writeStream{codes: map[int]int{}, stop: make(chan struct{}), target: target}
	for range clients {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			for {
				select {
				case <-w.stop:
					return
				default:
				}
				i := w.next.Add(1)
				s := w.target(i)
				var r daemontest.Response
				var what string
				if i%2 == 0 {
					what = fmt.Sprintf("trait CUSTOM_T%d", i)
					r, _ = s.API.At("1.6").Do(context.Background(), "PUT", fmt.Sprintf("/traits/CUSTOM_T%d", i), nil)
				} else {
					c := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", i)
					what = "claim " + c
					r, _ = s.API.At("1.28").Do(context.Background(), "PUT", "/allocations/"+c,
						`{"allocations":{"`+rp+`":{"resources":{"VCPU":1}}},"project_id":"p","user_id":"u","consumer_generation":null}`)
				}
				code := r.Code
				w.mu.Lock()
				w.codes[code]++
				if code == 201 || code == 204 {
					w.acked = append(w.acked, what)
				}
				w.mu.Unlock()
			}
		}()
	}
	return w
}

// waitFor lets the stream run until n more writes were acknowledged.
func (w *writeStream) waitFor(t *testing.T, n int) {
	t.Helper()
	w.mu.Lock()
	want := len(w.acked) + n
	w.mu.Unlock()
	daemontest.Soon(t, "acknowledged writes", func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.acked) < want {
			return fmt.Errorf("%d acknowledged, waiting for %d; answers %v", len(w.acked), want, w.codes)
		}
		return nil
	})
}

func (w *writeStream) finish() ([]string, map[int]int) {
	close(w.stop)
	w.done.Wait()
	return w.acked, w.codes
}

// checkAcked asks s for every acknowledged write.
func checkAcked(t *testing.T, s *daemontest.Daemon, acked []string) {
	t.Helper()
	daemontest.Soon(t, "acknowledged writes on "+s.URL, func() error {
		for _, a := range acked {
			var kind, name string
			fmt.Sscan(a, &kind, &name)
			if kind == "trait" {
				if r, _ := s.API.At("1.6").Do(t.Context(), "GET", "/traits/"+name, nil); r.Code != 204 {
					return fmt.Errorf("GET /traits/%s: %d", name, r.Code)
				}
				continue
			}
			if r, _ := s.API.At("1.28").Do(t.Context(), "GET", "/allocations/"+name, nil); r.Code != 200 || !bytes.Contains(r.Body, []byte(`"VCPU": 1`)) && !bytes.Contains(r.Body, []byte(`"VCPU":1`)) {
				return fmt.Errorf("GET /allocations/%s: %d %s", name, r.Code, r.Body)
			}
		}
		return nil
	})
}

// TestE2E_ReplicaKillAndDatabaseRestart writes through three replicas
// while one of them is killed with SIGKILL and then while MariaDB is
// killed and restarted: no acknowledged write is lost, the two survivors
// write again after the restart without being restarted, and a replica
// started afterwards sees everything.
func TestE2E_ReplicaKillAndDatabaseRestart(t *testing.T) {
	t.Parallel()
	set := startReplicaSet(t, 3)
	const rp = "11111111-2222-4333-8444-666666666666"
	set.Get(0).API.At("1.20").MustDo(t, 200, "POST", "/resource_providers", `{"uuid":"`+rp+`","name":"rp"}`)
	set.Get(0).API.At("1.20").MustDo(t, 200, "PUT", "/resource_providers/"+rp+"/inventories", `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":1000000}}}`)
	var killed atomic.Bool
	w := startWriteStream(8, rp, func(i int64) *daemontest.Daemon {
		if killed.Load() && i%3 == 1 {
			return set.Get(2) // the client's load balancer drops the dead replica
		}
		return set.Get(int(i % 3))
	})
	w.waitFor(t, 100)
	set.Kill(t, 1) // SIGKILL in the middle of the stream
	killed.Store(true)
	w.waitFor(t, 100)
	if err := set.db.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // writes fail meanwhile
	if err := set.db.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, 100) // the same processes write again
	acked, codes := w.finish()
	t.Logf("%d writes acknowledged; answers by status (0: no answer): %v", len(acked), codes)
	checkAcked(t, set.Get(0), acked)
	checkAcked(t, set.Get(2), acked)
	checkAcked(t, set.Restart(t, 1), acked)
}

// jobsOf reads a replica's job listing from its reconciler endpoint.
func jobsOf(addr string) (leader bool, runs []reconciler.RunRecord, err error) {
	r, err := daemontest.Client{Base: "http://" + addr}.Do(context.Background(), http.MethodGet, "/v1/jobs", nil)
	if err != nil {
		return false, nil, err
	}
	var out struct {
		Jobs       []reconciler.JobStatus `json:"jobs"`
		Leadership reconciler.Leadership  `json:"leadership"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return false, nil, fmt.Errorf("jobs of %s: %w", addr, err)
	}
	for _, j := range out.Jobs {
		runs = append(runs, j.Runs...)
	}
	return out.Leadership.Leader, runs, nil
}

// TestE2E_ReplicaLeaderTakeover runs the reconciler in three replicas:
// one leads and runs the job; after a SIGKILL of the leader another takes
// the lease over and runs the job (trigger leader). The time from the kill
// to that run is logged: the bound is lease_ttl + lease_ttl/3 + 1s.
func TestE2E_ReplicaLeaderTakeover(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	set := newReplicaSet(t)
	addrs := set.startLeading(t, ttl)
	leaderIdx := -1
	daemontest.Soon(t, "one leader that ran the job", func() error {
		leaders := 0
		for i, a := range addrs {
			lead, runs, err := jobsOf(a)
			if err != nil {
				return err
			}
			if lead && len(runs) > 0 {
				leaders, leaderIdx = leaders+1, i
			} else if !lead && len(runs) > 0 {
				return fmt.Errorf("standby %d ran %+v", i, runs)
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders with a run", leaders)
		}
		return nil
	})
	// An agent's heartbeat reaches a standby; the leader counts it too.
	standby := (leaderIdx + 1) % 3
	daemontest.Client{Base: "http://" + addrs[standby]}.MustDo(t, http.StatusNoContent, http.MethodPost, "/v1/services",
		`{"host":"compute-1","binary":"nova-compute","version":73}`)
	daemontest.Soon(t, "the heartbeat on the leader", func() error {
		r, err := daemontest.Client{Base: "http://" + addrs[leaderIdx]}.Do(t.Context(), http.MethodGet, "/v1/services", nil)
		if err == nil && !bytes.Contains(r.Body, []byte("compute-1")) {
			err = fmt.Errorf("services %s", r.Body)
		}
		return err
	})
	killedAt := time.Now()
	set.Kill(t, leaderIdx)
	var took time.Duration
	daemontest.Soon(t, "a new leader running the job", func() error {
		leaders := 0
		for i, a := range addrs {
			if i == leaderIdx {
				continue
			}
			lead, runs, err := jobsOf(a)
			if err != nil {
				return err
			}
			if !lead {
				continue
			}
			leaders++
			for _, r := range runs {
				if r.Trigger == reconciler.TriggerLeader {
					took = r.Start.Sub(killedAt)
				}
			}
		}
		if leaders != 1 || took == 0 {
			return fmt.Errorf("%d leaders, takeover run after %s", leaders, took)
		}
		return nil
	})
	t.Logf("leader killed; another replica ran the job %s later (lease_ttl %s, bound %s)", took, ttl, ttl+ttl/3+time.Second)
}
