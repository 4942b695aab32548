package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
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
	fs, common := newConfigFlagSet("audit", "placement-syncd audit [--delete] [--force] [--config FILE]", stderr, configSpec{noDB: true})
	del := fs.Bool("delete", false, "delete the orphaned consumers found (DELETE /allocations/{consumer}); without it, a dry run")
	force := fs.Bool("force", false, "with --delete, delete more than reconciler.audit.max_removals")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	if *force && !*del {
		return usageError{errors.New("audit: --force only goes with --delete")}
	}
	rc := cfg.Reconciler
	nova, err := novaclient.Open(ctx, assemble.NovaSettings(rc.Nova))
	if err != nil {
		return exitError{exitAuditNovaPartial, err}
	}
	opts, err := assemble.AuditOptions(ctx, rc, nova, assemble.LocalURL(cfg.API.Listen))
	if err != nil {
		return err
	}
	a := opts.NewAuditor()
	a.Concurrency = rc.Concurrency
	start := time.Now()
	res, runErr := a.Run(ctx, audit.Flags{Delete: *del, Force: *force})
	if res != nil {
		printAuditResult(stdout, res, a.Grace, time.Since(start))
	}
	return auditExit(res, runErr)
}

// auditExit maps a run to its exit code.
func auditExit(res *audit.Result, err error) error {
	switch {
	case errors.Is(err, novaclient.ErrUnavailable):
		return exitError{exitAuditNovaPartial, err}
	case res == nil:
		return exitError{exitFailure, err}
	case len(res.Partial) > 0:
		return exitError{exitAuditNovaPartial, fmt.Errorf("Nova read in part, nothing deleted: %s", strings.Join(res.Partial, "; "))}
	case errors.Is(err, audit.ErrRefused):
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

func printAuditResult(w io.Writer, res *audit.Result, grace time.Duration, took time.Duration) {
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
		res.Count(audit.FindingOrphanedConsumer), res.Count(audit.FindingStaleProvider), res.Count(audit.FindingOverCapacity),
		res.Count(audit.FindingIncompleteConsumer), len(res.Fresh), len(res.Deleted), took.Round(time.Millisecond))
	if len(res.Partial) > 0 {
		fmt.Fprintln(w, "Nova was read in part or not at all: orphans and stale providers are unconfirmed and nothing was deleted")
	}
}
