package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// Exit codes of audit, documented in README.md ("Audit"); 0, 3 and 4
// mean what they mean for nova-manage placement audit. When several
// apply, the first in this list wins: 2, 1 (Placement not read),
// exitAuditNovaPartial, exitRefused, 1 (deletes failed),
// exitAuditOrphans, exitAuditDeleted, exitAuditOther, 0.
const (
	exitAuditOrphans     = 3 // orphaned consumers found (and not all deleted)
	exitAuditDeleted     = 4 // orphaned consumers found and every one deleted
	exitAuditNovaPartial = 5 // Nova read in part or not at all: nothing deleted, orphans unconfirmed
	exitAuditOther       = 6 // no orphan, but stale providers, usage above capacity or incomplete consumers
)

// cmdAudit is the one-shot audit of Placement against Nova.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := newConfigFlagSet("audit", "placement-syncd audit [--delete] [--force] [--config FILE]", stderr)
	del := fs.Bool("delete", false, "delete the orphaned consumers found (DELETE /allocations/{consumer}); without it, a dry run")
	force := fs.Bool("force", false, "with --delete, delete more than reconciler.audit.max_removals")
	cfg, err := common.load(fs, args)
	if err != nil {
		return err
	}
	if *force && !*del {
		return usageError{errors.New("audit: --force only goes with --delete")}
	}
	rc := cfg.Reconciler
	nova, err := reconciler.OpenNova(ctx, novaSettings(rc.Nova))
	if err != nil {
		return exitError{exitAuditNovaPartial, err}
	}
	opts, err := auditOptions(ctx, rc, nova, localURL(cfg.API.Listen))
	if err != nil {
		return err
	}
	a := opts.NewAuditor()
	a.Concurrency = rc.Concurrency
	start := time.Now()
	res, runErr := a.Run(ctx, reconciler.AuditFlags{Delete: *del, Force: *force})
	if res != nil {
		printAuditResult(stdout, res, a.Grace, time.Since(start))
	}
	return auditExit(res, runErr)
}

// auditExit maps a run to its exit code.
func auditExit(res *reconciler.AuditResult, err error) error {
	switch {
	case errors.Is(err, reconciler.ErrNovaUnavailable):
		return exitError{exitAuditNovaPartial, err}
	case res == nil:
		return exitError{exitFailure, err}
	case len(res.Partial) > 0:
		return exitError{exitAuditNovaPartial, fmt.Errorf("Nova read in part, nothing deleted: %s", strings.Join(res.Partial, "; "))}
	case errors.Is(err, reconciler.ErrRefused):
		return exitError{exitRefused, err}
	case err != nil:
		return exitError{exitFailure, err}
	}
	orphans := len(res.Orphans())
	other := len(res.Findings) - orphans
	switch {
	case orphans > 0 && (res.DryRun || len(res.Deleted) < orphans):
		return exitError{exitAuditOrphans, fmt.Errorf("%d orphaned consumer(s) found, %d deleted", orphans, len(res.Deleted))}
	case orphans > 0:
		return exitError{exitAuditDeleted, fmt.Errorf("%d orphaned consumer(s) found and deleted", orphans)}
	case other > 0:
		return exitError{exitAuditOther, fmt.Errorf("no orphaned consumer, %d other finding(s)", other)}
	}
	return nil
}

func printAuditResult(w io.Writer, res *reconciler.AuditResult, grace time.Duration, took time.Duration) {
	mode := "dry run"
	if !res.DryRun {
		mode = "delete"
	}
	fmt.Fprintf(w, "audit (%s, grace %s): %d providers, %d consumers, %d of them Nova's\n", mode, grace, res.Providers, res.Consumers, res.NovaConsumers)
	for _, p := range res.Partial {
		fmt.Fprintf(w, "nova partial: %s\n", p)
	}
	for _, f := range res.Findings {
		fmt.Fprintf(w, "%s: %s\n", f.Kind, f.Detail)
		if f.Unconfirmed != "" {
			fmt.Fprintf(w, "  unconfirmed, not acted on: %s\n", f.Unconfirmed)
		}
	}
	for _, f := range res.Fresh {
		fmt.Fprintf(w, "within grace, not touched: consumer %s: %s\n", f.Consumer, f.Why)
	}
	if res.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", res.Refused)
	}
	for _, c := range res.Deleted {
		fmt.Fprintf(w, "deleted: allocations of consumer %s\n", c)
	}
	for c, e := range res.Failed {
		fmt.Fprintf(w, "delete failed: consumer %s: %s\n", c, e)
	}
	fmt.Fprintf(w, "%d orphaned, %d stale providers, %d over capacity, %d incomplete, %d within grace; %d deleted (%s)\n",
		res.Count(reconciler.FindingOrphanedConsumer), res.Count(reconciler.FindingStaleProvider), res.Count(reconciler.FindingOverCapacity),
		res.Count(reconciler.FindingIncompleteConsumer), len(res.Fresh), len(res.Deleted), took.Round(time.Millisecond))
	if len(res.Partial) > 0 {
		fmt.Fprintln(w, "Nova was read in part or not at all: orphans and stale providers are unconfirmed and nothing was deleted")
	}
}

// validateAudit checks reconciler.audit, and that the audit job has a
// source of Nova's instances: a Nova file has none.
func validateAudit(rc ReconcilerConfig, bad func(key, format string, args ...any)) {
	c := rc.Audit
	if rc.Jobs.Audit != "" && rc.Nova.Endpoint == "" && rc.Nova.Cloud == "" && rc.Nova.File == "" && rc.Nova.APIDatabase == "" && len(rc.Nova.CellDatabases) == 0 {
		bad("reconciler.jobs.audit", "the audit needs Nova's compute API (reconciler.nova.endpoint or cloud), a file of its answers (file) or its cell databases (api_database or cell_databases)")
	}
	if c.Grace < 0 {
		bad("reconciler.audit.grace", "must not be negative, got %s", c.Grace)
	}
	if _, err := removallimit.Parse(c.MaxRemovals); err != nil {
		bad("reconciler.audit.max_removals", "%v", err)
	}
}

// auditOptions builds the audit's sources from the reconciler's config:
// the compute API or the file of its answers when nova is one, the cell
// databases when configured.
func auditOptions(ctx context.Context, c ReconcilerConfig, nova reconciler.NovaSource, localURL string) (*reconciler.AuditOptions, error) {
	var sources []reconciler.AuditNova
	switch n := nova.(type) {
	case *reconciler.NovaAPI:
		sources = append(sources, n)
	case reconciler.NovaFile:
		sources = append(sources, n)
	}
	if c.Nova.APIDatabase != "" || len(c.Nova.CellDatabases) > 0 {
		cells := reconciler.CellDatabases{APIDatabase: c.Nova.APIDatabase, QueryTimeout: c.Nova.CellTimeout}
		for _, cdb := range c.Nova.CellDatabases {
			cells.Cells = append(cells.Cells, reconciler.CellDatabase{Name: cdb.Name, DSN: cdb.DSN})
		}
		sources = append(sources, cells)
	}
	if len(sources) == 0 {
		return nil, usageError{errors.New("audit: no source of Nova's instances: set reconciler.nova.endpoint or cloud (the compute API, admin), reconciler.nova.file, or reconciler.nova.api_database or cell_databases")}
	}
	limit, err := removallimit.Parse(c.Audit.MaxRemovals)
	if err != nil {
		return nil, usageError{fmt.Errorf("reconciler.audit.max_removals: %w", err)}
	}
	pc, err := reconcilerPlacementClient(ctx, c.Placement, localURL)
	if err != nil {
		return nil, err
	}
	return &reconciler.AuditOptions{Placement: reconciler.NewAuditPlacement(pc.ServiceClient()), Nova: sources, Grace: c.Audit.Grace,
		Delete: c.Audit.Delete, MaxRemovals: limit}, nil
}
