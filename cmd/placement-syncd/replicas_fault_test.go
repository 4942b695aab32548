package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
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
	jobs []string // each replica's reconciler address
}

func startFaultSet(t *testing.T) *faultSet {
	t.Helper()
	f := &faultSet{replicaSet: newReplicaSet(t)}
	f.jobs = f.startLeading(t, faultTTL)
	for _, p := range []struct {
		uuid     string
		capacity int
	}{{faultRPA, faultCapAB}, {faultRPB, faultCapAB}, {faultRPC, faultCapC}} {
		f.Get(0).API.At("1.20").MustDo(t, 200, "POST", "/resource_providers", `{"uuid":"`+p.uuid+`","name":"`+p.uuid+`"}`)
		f.Get(0).API.At("1.20").MustDo(t, 200, "PUT", "/resource_providers/"+p.uuid+"/inventories", fmt.Sprintf(`{"resource_provider_generation":0,"inventories":{"VCPU":{"total":%d}}}`, p.capacity))
	}
	return f
}

// pause stops replica i with SIGSTOP for d and returns the window it was
// stopped.
func (f *faultSet) pause(i int, d time.Duration) window {
	from, to := f.Pause(f.t, i, d)
	return window{from, to}
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
	f.Kill(t, 1)
	time.Sleep(2 * time.Second)
	f.Restart(t, 1)
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
	daemontest.Soon(t, "one leader", func() error {
		var err error
		lead, err = w.current()
		return err
	})
	killedAt := time.Now()
	f.Kill(t, lead)
	var took time.Duration
	daemontest.Soon(t, "another leader", func() error {
		var err error
		took, err = w.takeover(lead, killedAt)
		return err
	})
	f.Restart(t, lead)
	return took
}
