package agent

import (
	"testing"
	"time"
)

// TestRefreshDue: each provider is due once per period, at its own phase,
// so a fleet read all at once is re-read a slice at a time.
func TestRefreshDue(t *testing.T) {
	const n, period = 1000, time.Hour
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	uuids := make([]string, n)
	for i := range uuids {
		uuids[i] = time.Duration(i).String() + "-provider"
	}
	due := func(readAt, now time.Time) int {
		c := 0
		for _, u := range uuids {
			if refreshDue(u, readAt, now, period) {
				c++
			}
		}
		return c
	}
	if c := due(t0, t0); c != 0 {
		t.Fatalf("%d providers due right after being read", c)
	}
	if c := due(t0, t0.Add(period)); c != n {
		t.Fatalf("%d of %d providers due a whole period after being read", c, n)
	}
	// A tenth of the period later, about a tenth of the fleet is due.
	if c := due(t0, t0.Add(period/10)); c < n/20 || c > 3*n/20 {
		t.Fatalf("%d of %d providers due after a tenth of the period; want about %d", c, n, n/10)
	}
	if refreshDue(uuids[0], t0, t0.Add(100*period), 0) || refreshDue(uuids[0], t0, t0.Add(100*period), -1) {
		t.Fatal("a period <= 0 did not turn the re-read off")
	}
	// Re-read when due, a provider is not due again within the period.
	now := t0
	for !refreshDue(uuids[7], t0, now, period) {
		now = now.Add(time.Minute)
	}
	if refreshDue(uuids[7], now, now.Add(period-2*time.Minute), period) || !refreshDue(uuids[7], now, now.Add(period), period) {
		t.Fatal("a re-read provider's next re-read is not one period later")
	}
}
