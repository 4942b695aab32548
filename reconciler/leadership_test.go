package reconciler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// A standby replica runs nothing by itself; when it becomes the leader it
// runs every job once (trigger leader), in order; asked for, a job runs on
// any replica.
func TestRunnerFollowsLeadership(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var leads atomic.Bool
	checks := make(chan struct{}, 100)
	r := &runner{byName: map[string]*job{}, log: zap.NewNop(), m: m, now: time.Now,
		leader: func() bool {
			select {
			case checks <- struct{}{}:
			default:
			}
			return leads.Load()
		}}
	ran := make(chan string, 10)
	for _, name := range []string{"first", "second"} {
		if err := r.add(name, "@every 1h", func(context.Context) (outcome, error) { ran <- name; return outcome{}, nil }, false); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.loop(ctx) }()
	for range 3 { // the start, then two leadership checks, as a standby
		<-checks
	}
	if len(ran) != 0 {
		t.Fatalf("a standby ran %q", <-ran)
	}
	if rec, err := r.run(ctx, "second", TriggerDemand); err != nil || rec.Result != ResultOK || <-ran != "second" {
		t.Fatalf("a job asked for on a standby: %+v, %v", rec, err)
	}
	leads.Store(true)
	if a, b := <-ran, <-ran; a != "first" || b != "second" {
		t.Fatalf("the new leader ran %s, %s; want first, second", a, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "second"} {
		h, _ := r.history(name)
		if last := h[len(h)-1]; last.Trigger != TriggerLeader {
			t.Errorf("%s: last run's trigger %q, want %q", name, last.Trigger, TriggerLeader)
		}
	}
}
