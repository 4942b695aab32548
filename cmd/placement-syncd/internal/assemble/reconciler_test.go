package assemble

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// TestReconcilerOptions_JobSections: a job's options come from its
// section, found by the job's name (reconciler.audit for the audit), and
// are opened only when the job is scheduled; a section the job refuses
// is a configuration error naming its key.
func TestReconcilerOptions_JobSections(t *testing.T) {
	ctx := context.Background()
	c := config.Default().Reconciler
	c.StateFile = filepath.Join(t.TempDir(), "state.json")
	c.Nova.File = filepath.Join(t.TempDir(), "nova.json") // read at runs only
	c.Audit = reconciler.AuditSection{Grace: 3 * time.Minute, Delete: true, MaxRemovals: "7"}
	if got, ok := c.JobSections()[reconciler.JobAudit].(reconciler.AuditSection); !ok || got != c.Audit {
		t.Fatalf("JobSections()[audit] = %#v, want reconciler.audit", c.JobSections()[reconciler.JobAudit])
	}
	opts, err := ReconcilerOptions(ctx, c, "http://127.0.0.1:1", Leadership{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.JobOptions[reconciler.JobAudit]; ok {
		t.Errorf("audit not scheduled, yet its options were opened: %+v", opts.JobOptions)
	}
	c.Jobs = map[string]string{reconciler.JobAudit: "@every 1h"}
	if opts, err = ReconcilerOptions(ctx, c, "http://127.0.0.1:1", Leadership{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	a, ok := opts.JobOptions[reconciler.JobAudit].(*reconciler.AuditOptions)
	if !ok || a.Grace != 3*time.Minute || !a.Delete || a.MaxRemovals != (removallimit.Limit{N: 7}) || len(a.Nova) != 1 || a.Placement == nil {
		t.Fatalf("audit options %+v, want reconciler.audit's, the file as its one source and a Placement", a)
	}
	c.Audit.MaxRemovals = "lots"
	var cerr config.Error
	if _, err := ReconcilerOptions(ctx, c, "http://127.0.0.1:1", Leadership{}, nil, nil); !errors.As(err, &cerr) {
		t.Errorf("bad reconciler.audit.max_removals: %v, want a configuration error", err)
	}
}
