package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
)

// JobAudit compares Placement with Nova (audit.Auditor).
const JobAudit = "audit"

// Results of an audit run (placement_syncd_audit_runs_total): partial
// when Nova was read only in part, so that orphans and stale providers
// are suspicions and nothing was deleted.
const (
	AuditResultOK      = "ok"
	AuditResultError   = "error"
	AuditResultPartial = "partial"
)

// AuditSection is the audit's config section (reconciler.audit), shared
// by the job and the audit command.
type AuditSection struct {
	// Grace leaves alone a consumer whose allocations changed within it:
	// a claim whose instance is still being built.
	Grace time.Duration `yaml:"grace"`
	// Delete makes the job delete the orphaned consumers it finds; off,
	// it only reports them. The command deletes only with --delete.
	Delete bool `yaml:"delete"`
	// MaxRemovals bounds the consumers one run deletes: a count or a
	// percentage of Nova's consumers in Placement.
	MaxRemovals string `yaml:"max_removals"`
}

// DefaultAuditSection is the section's defaults.
func DefaultAuditSection() AuditSection {
	return AuditSection{Grace: audit.DefaultGrace, MaxRemovals: audit.DefaultMaxRemovals().String()}
}

// AuditOptions configure the audit job.
type AuditOptions struct {
	Placement audit.Placement
	// Nova are the sources of Nova's view: the compute API, the cell
	// databases, or both.
	Nova  []audit.Nova
	Grace time.Duration
	// Delete removes the orphans each run finds; false (the default)
	// only reports them.
	Delete      bool
	MaxRemovals removallimit.Limit
}

// NewAuditor builds the audit.Auditor of o.
func (o AuditOptions) NewAuditor() *audit.Auditor {
	return &audit.Auditor{Placement: o.Placement, Nova: o.Nova, Grace: o.Grace, MaxRemovals: o.MaxRemovals}
}

// OpenAudit builds the audit's options from its section: its sources
// are the compute API or the file of its answers when env has one, and
// the cell databases when configured; its Placement is env's (none
// without one: the caller sets it).
func OpenAudit(s AuditSection, env JobEnv) (*AuditOptions, error) {
	var sources []audit.Nova
	if env.Nova != nil {
		sources = append(sources, env.Nova)
	}
	if cells, ok := env.Settings.Cells(); ok {
		// The compute API (or its file) lists every cell's servers
		// beside the cells' own records: their union misses no cell.
		if l, ok := env.Nova.(novaclient.ComputeLister); ok {
			cells.Nova = l
		}
		sources = append(sources, cells)
	}
	if len(sources) == 0 {
		return nil, errors.New("audit: no source of Nova's instances: set reconciler.nova.endpoint or cloud (the compute API, admin), reconciler.nova.file, or reconciler.nova.api_database or cell_databases")
	}
	limit, err := removallimit.Parse(s.MaxRemovals)
	if err != nil {
		return nil, fmt.Errorf("reconciler.audit.max_removals: %w", err)
	}
	o := &AuditOptions{Nova: sources, Grace: s.Grace, Delete: s.Delete, MaxRemovals: limit}
	if env.Placement != nil {
		o.Placement = audit.NewPlacement(env.Placement)
	}
	return o, nil
}

// auditJob runs the audit.Auditor: findings per kind in the audit gauges,
// orphans deleted only when configured and Nova was read in full.
func auditJob() jobKind {
	return jobKind{
		name: JobAudit,
		open: func(section any, env JobEnv) (any, error) {
			s, ok := section.(AuditSection)
			if !ok {
				return nil, fmt.Errorf("audit: section of type %T, want reconciler.AuditSection", section)
			}
			return OpenAudit(s, env)
		},
		check: func(o Options) error {
			a, _ := o.JobOptions[JobAudit].(*AuditOptions)
			if a == nil || a.Placement == nil || len(a.Nova) == 0 {
				return audit.ErrNoSource
			}
			return nil
		},
		work: func(r *Reconciler) jobFunc {
			r.m.auditScheduled()
			opts := r.opts.JobOptions[JobAudit].(*AuditOptions)
			a := opts.NewAuditor()
			a.Remember, a.Now, a.Logger, a.Concurrency = true, r.opts.Now, r.log.Named(JobAudit), r.opts.Concurrency
			return func(ctx context.Context) (outcome, error) {
				res, err := a.Run(ctx, audit.Flags{Delete: opts.Delete})
				r.m.observeAudit(res, err)
				return auditOutcome(res, err), err
			}
		},
	}
}

func auditOutcome(res *audit.Result, err error) outcome {
	if res == nil {
		return outcome{}
	}
	o := outcome{changes: len(res.Deleted), drift: len(res.Findings)}
	o.detail = fmt.Sprintf("%d consumers (%d Nova's), %d providers: %d orphaned, %d stale providers, %d over capacity, %d incomplete, %d within grace",
		res.Consumers, res.NovaConsumers, res.Providers, res.Count(audit.FindingOrphanedConsumer), res.Count(audit.FindingStaleProvider),
		res.Count(audit.FindingOverCapacity), res.Count(audit.FindingIncompleteConsumer), len(res.Fresh))
	switch {
	case len(res.Partial) > 0:
		o.detail += "; Nova read in part, nothing deleted: " + res.Partial[0]
	case res.Refused != "":
		o.detail += "; refused: " + res.Refused
	case !res.DryRun:
		o.detail += fmt.Sprintf("; %d deleted", len(res.Deleted))
	}
	if err != nil && !errors.Is(err, novaclient.ErrUnavailable) && !errors.Is(err, audit.ErrRefused) {
		o.detail += "; " + err.Error()
	}
	o.logFields = auditLogFields(res)
	return o
}

// Bounds of the findings an audit run's log line quotes: the rest are in
// 'placement-syncd jobs list' and the audit command's output.
const (
	auditLogExamples    = 10
	auditLogDetailBytes = 300
)

// auditLogFields are the findings on the audit's "job run" log line: the
// count of each kind and the first few findings, so that the journal
// alone says what was found.
func auditLogFields(res *audit.Result) []zap.Field {
	examples := make([]string, 0, min(len(res.Findings), auditLogExamples))
	for _, f := range res.Findings[:min(len(res.Findings), auditLogExamples)] {
		line := f.Kind + ": " + f.Detail
		if len(line) > auditLogDetailBytes {
			line = strings.ToValidUTF8(line[:auditLogDetailBytes], "") + "…"
		}
		if f.Unconfirmed != "" {
			line += " (unconfirmed)"
		}
		examples = append(examples, line)
	}
	fields := []zap.Field{
		zap.Int("orphaned_consumers", res.Count(audit.FindingOrphanedConsumer)),
		zap.Int("stale_providers", res.Count(audit.FindingStaleProvider)),
		zap.Int("over_capacity", res.Count(audit.FindingOverCapacity)),
		zap.Int("incomplete_consumers", res.Count(audit.FindingIncompleteConsumer)),
	}
	confirmed := 0
	for _, f := range fields {
		confirmed += int(f.Integer)
	}
	return append(fields,
		// Suspicions only: Nova was read in part.
		zap.Int("unconfirmed", len(res.Findings)-confirmed),
		zap.Int("within_grace", len(res.Fresh)),
		zap.Int("deleted", len(res.Deleted)),
		zap.Strings("findings", examples),
		zap.Int("findings_not_listed", len(res.Findings)-len(examples)),
	)
}
