package main

import (
	"context"
	"strings"
	"testing"
)

// waitCapacity waits until the daemon at api has read Nova's flavors.
func waitCapacity(t *testing.T, ctx context.Context, api string) {
	t.Helper()
	eventually(t, ctx, "capacity by flavor has read Nova's flavors", func() bool {
		code, raw := httpGet(t, ctx, api+"/metrics")
		return code == 200 && strings.Contains(string(raw), "\nplacement_syncd_capacity_flavors 5\n")
	})
}
