package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBackoff moved here from the agent with the backoff it checks.
func TestBackoff(t *testing.T) {
	for n := 1; n < 10; n++ {
		d := Exponential(100, 1000, n)
		if d < 50 || d > 1000 {
			t.Fatalf("backoff(%d) = %d, outside [50, 1000]", n, d)
		}
	}
}

// TestExponential: the bound doubles per retry up to max, and each draw
// is from its upper half; without a base the wait is max's.
func TestExponential(t *testing.T) {
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
			if d := Exponential(tc.base, tc.max, tc.n); d < tc.lo || d > tc.hi {
				t.Fatalf("Exponential(%d, %d, %d) = %d, outside [%d, %d]", tc.base, tc.max, tc.n, d, tc.lo, tc.hi)
			}
		}
	}
}

// TestLinear: a draw from [0, step·n], the bound capped at max.
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
			if d := Linear(tc.step, tc.max, tc.n); d < 0 || d > tc.hi {
				t.Fatalf("Linear(%d, %d, %d) = %d, outside [0, %d]", tc.step, tc.max, tc.n, d, tc.hi)
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
	if err := (Retry{Attempts: 2}).Wait(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry.Wait without delays after cancel = %v", err)
	}
}
