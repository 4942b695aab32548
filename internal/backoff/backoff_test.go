package backoff

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Each caller's policy, as the caller builds it with its defaults.
var (
	// agentPass: after a failed pass, doubling from BackoffBase (1 s) up
	// to Interval (10 s).
	agentPass = Policy{Base: time.Second, Cap: 10 * time.Second}
	// agentConflict: between re-reads on a conflict, a draw from
	// [0, BackoffBase/10·n], at most 2 s.
	agentConflict = Policy{Base: time.Second / 10, Cap: 2 * time.Second, Growth: Linear, Jitter: FullJitter, Attempts: 6}
	// reconcilerWrite: the reconciler's DefaultRetry.
	reconcilerWrite = Policy{Attempts: 5, Base: 50 * time.Millisecond, Cap: time.Second}
	// ledgerWrite: n·(7..14 ms) between tries of an aborted write.
	ledgerWrite = Policy{Base: 14 * time.Millisecond, Cap: time.Second, Growth: Linear, Attempts: 5}
	// mysqlMigrate: the MySQL backend's migrateRetry, n·50 ms exactly.
	mysqlMigrate = Policy{Base: 50 * time.Millisecond, Cap: time.Second, Growth: Linear, Jitter: NoJitter, Attempts: 5}
	// atOnce: the Ironic driver's listRetry and a replica's seedRetry
	// start over without a wait.
	atOnce = Policy{Attempts: 3}
)

// TestPolicy_PreviousDelays pins the delays of retries 0..8 of each
// caller, with the lowest draw, the highest, and a seeded source drawn in
// sequence. The agent's and the reconciler's are those their formulas
// gave before Policy (Exponential(base, max, n) = base·2^(n-1) capped,
// then half + N(half+1); agent conflicts: Linear(step, max, n) =
// N(min(step·n, max)+1)). The ledger's own n·(5+IntN(10)) ms became
// the shared equal jitter over n·14 ms: n·(7..14) ms. The MySQL
// backend's migrations waited n·50 ms, the Ironic listing and a
// replica's seeding retried at once.
func TestPolicy_PreviousDelays(t *testing.T) {
	for _, tc := range []struct {
		name        string
		p           Policy
		lo, hi, pcg []time.Duration
	}{
		{"agent pass", agentPass,
			[]time.Duration{500000000, 500000000, 1000000000, 2000000000, 4000000000, 5000000000, 5000000000, 5000000000, 5000000000},
			[]time.Duration{1000000000, 1000000000, 2000000000, 4000000000, 8000000000, 10000000000, 10000000000, 10000000000, 10000000000},
			[]time.Duration{884686635, 808218112, 1784428002, 3593193157, 4937105082, 5206026285, 7499558777, 7246919389, 5663996693}},
		{"agent conflict", agentConflict,
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 100000000, 200000000, 300000000, 400000000, 500000000, 600000000, 700000000, 800000000},
			[]time.Duration{0, 76937327, 123287245, 235328401, 318638632, 117138135, 24723154, 349938229, 359507102}},
		{"reconciler write", reconcilerWrite,
			[]time.Duration{25000000, 25000000, 50000000, 100000000, 200000000, 400000000, 500000000, 500000000, 500000000},
			[]time.Duration{50000000, 50000000, 100000000, 200000000, 400000000, 800000000, 1000000000, 1000000000, 1000000000},
			[]time.Duration{44234332, 40410906, 89221400, 179659658, 246855254, 416482102, 749955878, 724691939, 566399669}},
		{"ledger write", ledgerWrite,
			[]time.Duration{0, 7000000, 14000000, 21000000, 28000000, 35000000, 42000000, 49000000, 56000000},
			[]time.Duration{0, 14000000, 28000000, 42000000, 56000000, 70000000, 84000000, 98000000, 112000000},
			[]time.Duration{0, 12385613, 22630107, 37472988, 50304704, 43199669, 43730620, 73495676, 81165497}},
		{"mysql migrate", mysqlMigrate,
			[]time.Duration{0, 50000000, 100000000, 150000000, 200000000, 250000000, 300000000, 350000000, 400000000},
			[]time.Duration{0, 50000000, 100000000, 150000000, 200000000, 250000000, 300000000, 350000000, 400000000},
			[]time.Duration{0, 50000000, 100000000, 150000000, 200000000, 250000000, 300000000, 350000000, 400000000}},
		{"at once", atOnce,
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		var lo, hi, pcg []time.Duration
		src := rand.New(rand.NewPCG(1, 2))
		for n := 0; n <= 8; n++ {
			lo = append(lo, tc.p.delay(n, func(int64) int64 { return 0 }))
			hi = append(hi, tc.p.delay(n, func(m int64) int64 { return m - 1 }))
			pcg = append(pcg, tc.p.delay(n, src.Int64N))
		}
		for _, got := range []struct {
			draw      string
			got, want []time.Duration
		}{{"lowest", lo, tc.lo}, {"highest", hi, tc.hi}, {"seeded", pcg, tc.pcg}} {
			if !slices.Equal(got.got, got.want) {
				t.Errorf("%s, %s draw: %v, want %v", tc.name, got.draw, got.got, got.want)
			}
		}
	}
}

// TestBackoff moved here from the agent with the backoff it checks.
func TestBackoff(t *testing.T) {
	for n := 1; n < 10; n++ {
		d := Policy{Base: 100, Cap: 1000}.Delay(n)
		if d < 50 || d > 1000 {
			t.Fatalf("backoff(%d) = %d, outside [50, 1000]", n, d)
		}
	}
}

// TestDoubling: the bound doubles per retry up to the cap, and each draw
// is from its upper half; without a base the wait is the cap's.
func TestDoubling(t *testing.T) {
	for _, tc := range []struct {
		base, max time.Duration
		n         int
		lo, hi    time.Duration
	}{
		{100, 1000, 1, 50, 100},
		{100, 1000, 2, 100, 200},
		{100, 1000, 4, 400, 800},
		{100, 1000, 5, 500, 1000},
		{100, 1000, 60, 500, 1000},
		{0, 1000, 3, 500, 1000},
		{100, 0, 1, 0, 0},
	} {
		for range 50 {
			if d := (Policy{Base: tc.base, Cap: tc.max}).Delay(tc.n); d < tc.lo || d > tc.hi {
				t.Fatalf("doubling(%d, %d, %d) = %d, outside [%d, %d]", tc.base, tc.max, tc.n, d, tc.lo, tc.hi)
			}
		}
	}
}

// TestLinear: a draw from [0, step·n], the bound capped.
func TestLinear(t *testing.T) {
	for _, tc := range []struct {
		step, max time.Duration
		n         int
		hi        time.Duration
	}{
		{10, 1000, 1, 10},
		{10, 1000, 3, 30},
		{10, 25, 3, 25},
		{0, 25, 3, 0},
	} {
		for range 50 {
			p := Policy{Base: tc.step, Cap: tc.max, Growth: Linear, Jitter: FullJitter}
			if d := p.Delay(tc.n); d < 0 || d > tc.hi {
				t.Fatalf("linear(%d, %d, %d) = %d, outside [0, %d]", tc.step, tc.max, tc.n, d, tc.hi)
			}
		}
	}
}

// TestSleep: a sleep ends early with the context's error.
func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep after cancel = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("Sleep did not end with its context")
	}
	if err := (Policy{Attempts: 2}).Wait(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Policy.Wait without delays after cancel = %v", err)
	}
}
