package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func TestWriteResult(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, resultCommitted},
		{concurrentProviderUpdate(), resultConflict},
		{fmt.Errorf("claim: %w", store.ErrConsumerGeneration), resultConflict},
		{store.Errorf(store.ErrNotFound, "no such provider"), resultRejected},
		{fmt.Errorf("commit: %w", errors.New("disk I/O error")), resultError},
		{context.Canceled, resultError},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.err), func(t *testing.T) {
			if got := writeResult(tt.err); got != tt.want {
				t.Errorf("writeResult = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStoreMetrics drives real writes and reads the counts back from the
// registry given in Options.
func TestStoreMetrics(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	s, err := New(ctx, openBackend(t, newDB(t)), Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatal(err)
	}
	// Stale generation: the transaction's compare-and-swap refuses it.
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 4)}); !errors.Is(err, store.ErrConcurrentUpdate) {
		t.Fatalf("stale write: %v, want ErrConcurrentUpdate", err)
	}
	if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: otherRPUUID, Name: "rp"}); err == nil {
		t.Fatal("duplicate name accepted")
	}
	if _, err := s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}

	if got := testutil.ToFloat64(s.metrics.conflicts); got != 1 {
		t.Errorf("conflicts = %v, want 1", got)
	}
	for result, want := range map[string]int{resultCommitted: 2, resultConflict: 1, resultRejected: 1, resultError: 0} {
		if got := histogramCount(t, reg, "placement_syncd_store_transaction_duration_seconds", result); got != want {
			t.Errorf("transactions{result=%q} = %d, want %d", result, got, want)
		}
	}
	if got := histogramCount(t, reg, "placement_syncd_store_snapshot_build_duration_seconds", ""); got != 1 {
		t.Errorf("snapshot builds = %d, want 1", got)
	}

	// A second store on the same registry is refused, not silently merged.
	be := openBackend(t, newDB(t))
	defer be.Close() // a failed New leaves it to the caller
	_, err = New(ctx, be, Options{Registerer: reg})
	if err == nil || !strings.Contains(err.Error(), "register store metrics") {
		t.Errorf("second New on one registry: %v", err)
	}
}

// histogramCount is the sample count of the series of histogram name
// whose only label, if any, has value label.
func histogramCount(t *testing.T, g prometheus.Gatherer, name, label string) int {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range fams {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 0 && label == "" || len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				return int(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no %s{%s}", name, label)
	return 0
}
