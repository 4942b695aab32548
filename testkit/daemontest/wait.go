package daemontest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// Patience is how long Soon waits: a step with no deadline of its own.
const Patience = 30 * time.Second

// pollEvery is how often a wait asks again.
const pollEvery = 50 * time.Millisecond

// Check is a condition a test waits for: a bool, or an error that says
// why it does not hold yet.
type Check interface{ func() bool | func() error }

// Eventually asks check every 50 ms until it holds, failing the test
// with what (and check's last error) when ctx ends first.
func Eventually[C Check](t testing.TB, ctx context.Context, what string, check C) {
	t.Helper()
	var last error
	for {
		switch f := any(check).(type) {
		case func() bool:
			if f() {
				return
			}
		case func() error:
			if last = f(); last == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = errors.New("it does not hold")
			}
			t.Fatalf("daemontest: timed out waiting until %s (%v): %v", what, ctx.Err(), last)
		case <-time.After(pollEvery):
		}
	}
}

// Soon is Eventually within Patience, for a step the test gives no
// deadline of its own.
func Soon[C Check](t testing.TB, what string, check C) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Patience)
	defer cancel()
	Eventually(t, ctx, what, check)
}

// WaitMetric scrapes path until cond holds of the scrape, and returns
// that scrape.
func (c Client) WaitMetric(t testing.TB, ctx context.Context, path, what string, cond func(metricstest.Scrape) bool) metricstest.Scrape {
	t.Helper()
	var m metricstest.Scrape
	Eventually(t, ctx, what, func() bool {
		m = c.Scrape(t, path)
		return cond(m)
	})
	return m
}
