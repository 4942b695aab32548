package main

import (
	"context"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/metricstest"
)

// waitCapacity waits until the daemon has read Nova's flavors.
func waitCapacity(t *testing.T, ctx context.Context, d *daemontest.Daemon) {
	t.Helper()
	d.API.WaitMetric(t, ctx, "/metrics", "capacity by flavor has read Nova's flavors", func(m metricstest.Scrape) bool {
		v, ok := m.Value("placement_syncd_capacity_flavors")
		return ok && v == 5
	})
}
