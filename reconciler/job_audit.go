package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
)

// JobAudit compares Placement with Nova (Auditor).
const JobAudit = "audit"

// Results of an audit run (placement_syncd_audit_runs_total): partial
// when Nova was read only in part, so that orphans and stale providers
// are suspicions and nothing was deleted.
const (
	AuditResultOK      = "ok"
	AuditResultError   = "error"
	AuditResultPartial = "partial"
)

// AuditOptions configure the audit job.
type AuditOptions struct {
	Placement AuditPlacement
	// Nova are the sources of Nova's view: the compute API, the cell
	// databases, or both.
	Nova  []AuditNova
	Grace time.Duration
	// Delete removes the orphans each run finds; false (the default)
	// only reports them.
	Delete      bool
	MaxRemovals removallimit.Limit
}

// NewAuditor builds the Auditor of o.
func (o AuditOptions) NewAuditor() *Auditor {
	return &Auditor{Placement: o.Placement, Nova: o.Nova, Grace: o.Grace, MaxRemovals: o.MaxRemovals}
}

// auditJob runs the Auditor: findings per kind in the audit gauges,
// orphans deleted only when configured and Nova was read in full.
func auditJob() jobKind {
	return jobKind{
		name: JobAudit,
		check: func(o Options) error {
			if o.Audit == nil || o.Audit.Placement == nil || len(o.Audit.Nova) == 0 {
				return errNoAuditSource
			}
			return nil
		},
		work: func(r *Reconciler) jobFunc {
			r.m.auditScheduled()
			a := r.opts.Audit.NewAuditor()
			a.Remember, a.Now, a.Logger, a.Concurrency = true, r.opts.Now, r.log.Named(JobAudit), r.opts.Concurrency
			return func(ctx context.Context) (outcome, error) {
				res, err := a.Run(ctx, AuditFlags{Delete: r.opts.Audit.Delete})
				r.m.observeAudit(res, err)
				return auditOutcome(res, err), err
			}
		},
	}
}

func auditOutcome(res *AuditResult, err error) outcome {
	if res == nil {
		return outcome{}
	}
	o := outcome{changes: len(res.Deleted), drift: len(res.Findings)}
	o.detail = fmt.Sprintf("%d consumers (%d Nova's), %d providers: %d orphaned, %d stale providers, %d over capacity, %d incomplete, %d within grace",
		res.Consumers, res.NovaConsumers, res.Providers, res.Count(FindingOrphanedConsumer), res.Count(FindingStaleProvider),
		res.Count(FindingOverCapacity), res.Count(FindingIncompleteConsumer), len(res.Fresh))
	switch {
	case len(res.Partial) > 0:
		o.detail += "; Nova read in part, nothing deleted: " + res.Partial[0]
	case res.Refused != "":
		o.detail += "; refused: " + res.Refused
	case !res.DryRun:
		o.detail += fmt.Sprintf("; %d deleted", len(res.Deleted))
	}
	if err != nil && !errors.Is(err, ErrNovaUnavailable) && !errors.Is(err, ErrRefused) {
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
func auditLogFields(res *AuditResult) []zap.Field {
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
		zap.Int("orphaned_consumers", res.Count(FindingOrphanedConsumer)),
		zap.Int("stale_providers", res.Count(FindingStaleProvider)),
		zap.Int("over_capacity", res.Count(FindingOverCapacity)),
		zap.Int("incomplete_consumers", res.Count(FindingIncompleteConsumer)),
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
