package reconciler

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// flakyComputes lists computes until told to fail.
type flakyComputes struct {
	mu   sync.Mutex
	fail error
}

func (f *flakyComputes) Computes(context.Context) ([]novaclient.ComputeService, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	return []novaclient.ComputeService{{Host: "c1", Version: 73, Cell: "cell1"}}, nil
}

func (f *flakyComputes) set(err error) {
	f.mu.Lock()
	f.fail = err
	f.mu.Unlock()
}

// TestGate_MaxStaleness: with gate.max_staleness set, a failed read
// leaves the gate open on the last list, saying so, until the list is
// older than the bound; without it the gate closes at the first failure.
func TestGate_MaxStaleness(t *testing.T) {
	e := newEnv(t, placementtest.Ours)
	for _, c := range []struct {
		name      string
		stale     time.Duration
		openAfter []bool // after failed reads 1 and 2, each 40 s later
	}{
		{"no staleness allowed", 0, []bool{false, false}},
		{"one minute allowed", time.Minute, []bool{true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			src := &flakyComputes{}
			r, err := New(Options{Placement: e.pl, Computes: src, MaxStaleness: c.stale, Logger: zaptest.NewLogger(t), Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.RefreshComputes(ctx); err != nil || !r.Gate().Open {
				t.Fatalf("first read: %v, gate %+v", err, r.Gate())
			}
			src.set(errors.New("cell cell2: access denied"))
			for i, want := range c.openAfter {
				mu.Lock()
				now = now.Add(40 * time.Second)
				mu.Unlock()
				if err := r.RefreshComputes(ctx); err == nil {
					t.Fatalf("failed read %d returned no error", i+1)
				}
				g := r.Gate()
				if g.Open != want || !strings.Contains(g.Reason, "access denied") {
					t.Errorf("after failed read %d (%s): open %v, reason %q; want open %v and the failure in the reason", i+1, now.Format(time.TimeOnly), g.Open, g.Reason, want)
				}
			}
		})
	}
}
