package reconciler

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
)

// TestAudit_RunResults: a run is partial when Nova was read in part,
// an error when Nova or Placement could not be read at all; a refusal by
// the guard is a run that went as configured. Orphans and stale
// providers keep their last value when the run could not confirm them.
func TestAudit_RunResults(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	orphan := []audit.Finding{{Kind: audit.FindingOrphanedConsumer, Consumer: "c"}}
	m.observeAudit(&audit.Result{Findings: orphan}, nil)
	m.observeAudit(&audit.Result{Findings: orphan, Refused: "too many"}, audit.ErrRefused)
	m.observeAudit(&audit.Result{Partial: []string{"cell2"}}, nil)
	m.observeAudit(&audit.Result{Partial: []string{"Nova not read"}, NovaUnread: true}, novaclient.ErrUnavailable)
	m.observeAudit(nil, ErrUnavailable)
	for result, want := range map[string]float64{AuditResultOK: 2, AuditResultPartial: 1, AuditResultError: 2} {
		if got := testutil.ToFloat64(m.auditRuns.WithLabelValues(result)); got != want {
			t.Errorf("runs{result=%s} = %v, want %v", result, got, want)
		}
	}
	if got := testutil.ToFloat64(m.auditFindings.WithLabelValues(audit.FindingOrphanedConsumer)); got != 1 {
		t.Errorf("orphans after partial runs = %v, want the last confirmed 1", got)
	}
}
