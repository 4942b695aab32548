package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// The providers of TestE2E_ReplicaFaults. A and B have room for every
// claim their pause-phase streams keep, so each of those requests is a
// write (a claim refused for capacity never reaches the database); C is
// smaller than what its streams try to keep, so they run into capacity.
const (
	faultRPA      = "aaaaaaaa-0000-4000-8000-00000000000a"
	faultRPB      = "bbbbbbbb-0000-4000-8000-00000000000b"
	faultRPC      = "cccccccc-0000-4000-8000-00000000000c"
	faultCapAB    = 48
	faultCapC     = 40
	faultTTL      = 3 * time.Second
	faultMaxStall = time.Second
)

// faultSet is three `serve` replicas on one MariaDB, each running the
// reconciler with leader election, which the test kills, pauses and
// restarts while its streams write through them.
type faultSet struct {
	*replicaSet
	cfgs []string // each replica's configuration file, for restarts
	jobs []string // each replica's reconciler address
	// mu guards replicaSet.rs: streams read it while a replica restarts.
	mu sync.Mutex
}

func startFaultSet(t *testing.T) *faultSet {
	t.Helper()
	s := mariadbtest.Start(t)
	db := s.NewDatabase(t)
	f := &faultSet{replicaSet: &replicaSet{t: t, db: s, name: db, url: s.URL(db), dir: t.TempDir()}}
	if r := syncd.Exec(t, f.dir, "db", "migrate", "--db", f.url); r.Code != exitOK {
		t.Fatalf("db migrate: %d %s", r.Code, r.Stderr)
	}
	for i := range 3 {
		addr := freeAddr(t)
		cfg := filepath.Join(f.dir, fmt.Sprintf("replica%d.yaml", i))
		writeFile(t, cfg, fmt.Sprintf("reconciler:\n  enabled: true\n  listen: %q\n  state_file: %s\n  jobs:\n    aggregates: \"\"\n    owner_traits: \"@every 1h\"\n  leader:\n    lease_ttl: %s\n",
			addr, filepath.Join(f.dir, fmt.Sprintf("state%d.json", i)), faultTTL))
		f.cfgs, f.jobs = append(f.cfgs, cfg), append(f.jobs, addr)
		f.rs = append(f.rs, f.start(i, "--config", cfg))
	}
	for _, p := range []struct {
		uuid     string
		capacity int
	}{{faultRPA, faultCapAB}, {faultRPB, faultCapAB}, {faultRPC, faultCapC}} {
		mustCall(t, f.rs[0], "POST", "/resource_providers", "1.20", `{"uuid":"`+p.uuid+`","name":"`+p.uuid+`"}`, 200)
		mustCall(t, f.rs[0], "PUT", "/resource_providers/"+p.uuid+"/inventories", "1.20",
			fmt.Sprintf(`{"resource_provider_generation":0,"inventories":{"VCPU":{"total":%d}}}`, p.capacity), 200)
	}
	return f
}

func (f *faultSet) replica(i int) *durServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rs[i]
}

// kill sends replica i SIGKILL and waits until it is gone.
func (f *faultSet) kill(i int) { f.replica(i).kill(f.t) }

// restart starts replica i again with its configuration.
func (f *faultSet) restart(i int) {
	s := f.start(i, "--config", f.cfgs[i])
	f.mu.Lock()
	f.rs[i] = s
	f.mu.Unlock()
}

// tails are the ends of the replicas' logs, for a failure.
func (f *faultSet) tails() string {
	var b strings.Builder
	for i := range f.rs {
		fmt.Fprintf(&b, "replica %d:\n%s\n", i, f.replica(i).tail())
	}
	return b.String()
}

// pause stops replica i with SIGSTOP for d and returns the window it was
// stopped.
func (f *faultSet) pause(i int, d time.Duration) window {
	f.t.Helper()
	pid := f.replica(i).cmd.Process.Pid
	from := time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		f.t.Fatalf("SIGSTOP replica %d: %v", i, err)
	}
	// A failure before SIGCONT must not leave it stopped for cleanup.
	defer func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			f.t.Errorf("SIGCONT replica %d: %v", i, err)
		}
	}()
	time.Sleep(d)
	return window{from, time.Now()}
}

// TestE2E_ReplicaFaults writes through three replicas on one MariaDB
// while, in turn, a replica is killed and restarted, a replica is paused
// with SIGSTOP (10 s, then 5 × 1 s) while the other two write on another
// provider, MariaDB is killed and restarted, and the reconciler's leader
// is killed. No acknowledged claim may be lost, no provider
// over-allocated, every replica must converge with the database, at most
// one replica may lead at any time, and a paused replica may not stall
// the others' writes for more than a second.
//
// Not parallel: the stall figures are timings, which other tests of
// this package would disturb.
func TestE2E_ReplicaFaults(t *testing.T) {
	f := startFaultSet(t)
	l := newFaultLog()
	defer l.client.CloseIdleConnections()
	w := watchLeaders(f.jobs)
	defer w.end()
	faultKillPhase(t, f, l)
	long, short := faultPausePhase(t, f, l)
	faultDatabasePhase(t, f, l)
	took := faultLeaderPhase(t, f, w)
	w.end()
	v := verifyFaults(t, f, l)
	t.Logf("replica faults: acknowledged=%d lost=%d over-allocated=%d diverged=%d takeover=%.2fs max-leaders=%d stall-10s-pause=%s stall-1s-pauses=%s",
		v.acked, v.lost, v.over, v.diverged, took.Seconds(), w.most(), long.worst().Round(time.Millisecond), short.worst().Round(time.Millisecond))
	t.Logf("10 s pause: longest latency %s, longest gap %s; 1 s pauses: longest latency %s, longest gap %s; unknown outcomes %d; answers by status (0: none) %v",
		long.latency.Round(time.Millisecond), long.gap.Round(time.Millisecond), short.latency.Round(time.Millisecond), short.gap.Round(time.Millisecond), v.unknown, l.statusCounts())
	for _, e := range v.errs {
		t.Error(e)
	}
	if n := w.most(); n > 1 {
		t.Errorf("%d replicas said they lead at once (%s)", n, w.twoAt())
	}
	if bound := faultTTL + faultTTL/3 + time.Second; took > bound {
		t.Errorf("takeover took %s, bound lease_ttl + lease_ttl/3 + 1s = %s", took, bound)
	}
	if s := long.worst(); s > faultMaxStall {
		t.Errorf("replica 0 paused 10 s stalled the writes of the others for %s (latency %s, gap %s), want ≤ %s", s, long.latency, long.gap, faultMaxStall)
	}
	if s := short.worst(); s > faultMaxStall {
		t.Errorf("replica 0 paused 1 s stalled the writes of the others for %s (latency %s, gap %s), want ≤ %s", s, short.latency, short.gap, faultMaxStall)
	}
}

// faultKillPhase: claims through all three replicas on C while replica
// 1 is killed with SIGKILL and restarted 2 s later.
func faultKillPhase(t *testing.T, f *faultSet, l *faultLog) {
	st := l.stream(f, streamSpec{rp: faultRPC, size: 2, keep: 8, clients: 3, replica: func(c int) int { return c % 3 }})
	defer st.end()
	l.waitAcked(t, f, 20)
	f.kill(1)
	time.Sleep(2 * time.Second)
	f.restart(1)
	l.waitAcked(t, f, 20)
}

// faultPausePhase: replica 0 claims on A from six clients, so that it is
// almost always inside a transaction, while replicas 1 and 2 claim on B;
// replica 0 is stopped for 10 s, then five times for 1 s. It returns the
// longest stall of the others' writes in the 10 s pause and in the short
// ones.
func faultPausePhase(t *testing.T, f *faultSet, l *faultLog) (long, short stall) {
	paused := l.stream(f, streamSpec{rp: faultRPA, size: 2, keep: 3, clients: 6, replica: func(int) int { return 0 }})
	healthy := l.stream(f, streamSpec{rp: faultRPB, size: 2, keep: 3, clients: 6, replica: func(c int) int { return 1 + c%2 }})
	l.waitAcked(t, f, 20)
	windows := []window{f.pause(0, 10*time.Second)}
	for range 5 {
		time.Sleep(time.Second)
		windows = append(windows, f.pause(0, time.Second))
	}
	time.Sleep(time.Second)
	// Requests in flight at a window's end are measured once answered.
	paused.end()
	healthy.end()
	long = l.stall([]int{1, 2}, windows[0])
	for _, w := range windows[1:] {
		short = short.max(l.stall([]int{1, 2}, w))
	}
	return long, short
}

// faultDatabasePhase: claims through all three replicas on C while
// MariaDB is killed and restarted 5 s later; the same processes must
// write again.
func faultDatabasePhase(t *testing.T, f *faultSet, l *faultLog) {
	st := l.stream(f, streamSpec{rp: faultRPC, size: 2, keep: 8, clients: 3, replica: func(c int) int { return c % 3 }})
	defer st.end()
	l.waitAcked(t, f, 10)
	if err := f.db.Kill(); err != nil {
		t.Fatalf("kill MariaDB: %v", err)
	}
	time.Sleep(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.db.Restart(ctx); err != nil {
		t.Fatalf("restart MariaDB: %v", err)
	}
	l.waitAcked(t, f, 20)
}

// faultLeaderPhase kills the reconciler's leader with SIGKILL, returns
// the time until another replica said it leads, and restarts the killed
// one.
func faultLeaderPhase(t *testing.T, f *faultSet, w *leaderWatch) time.Duration {
	var lead int
	eventuallyOK(t, "one leader", func() error {
		var err error
		lead, err = w.current()
		return err
	})
	killedAt := time.Now()
	f.kill(lead)
	var took time.Duration
	eventuallyOK(t, "another leader", func() error {
		var err error
		took, err = w.takeover(lead, killedAt)
		return err
	})
	f.restart(lead)
	return took
}
