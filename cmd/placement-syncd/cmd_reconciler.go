package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// Exit codes of sync-aggregates, documented in README.md. When several
// apply, the first in this list wins.
const (
	exitNovaUnavailable = 4 // Nova (or the Nova file) could not be read; nothing written
	exitPlacementError  = 5 // Placement could not be read, or some writes failed
	exitUnmappedHosts   = 6 // synced, but some hosts have no compute node provider
	exitRefused         = 7 // the plan would mass-delete (empty Nova answer, max_removals); nothing written
)

// exitError carries a command's own exit code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// cmdSyncAggregates is the one-shot aggregate mirroring.
func cmdSyncAggregates(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := newConfigFlagSet("sync-aggregates", "placement-syncd sync-aggregates [--dry-run] [--force] [--verbose] [--config FILE]", stderr, configSpec{noDB: true})
	dryRun := fs.Bool("dry-run", false, "print the plan and write nothing")
	force := fs.Bool("force", false, "apply a plan refused as a mass deletion (empty Nova answer, more than reconciler.aggregates.max_removals)")
	verbose := fs.Bool("verbose", false, "also print what was read and providers already in sync")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	rc := cfg.Reconciler
	if rc.Nova.File == "" && rc.Nova.Endpoint == "" && rc.Nova.Cloud == "" {
		return usageError{errors.New("sync-aggregates: no Nova source configured (reconciler.nova.file, endpoint or cloud)")}
	}
	r, err := assemble.NewReconciler(ctx, rc, assemble.LocalURL(cfg.API.Listen), zap.NewNop(), nil)
	if err != nil {
		return err
	}
	start := time.Now()
	res, runErr := r.SyncAggregates(ctx, reconciler.RunFlags{DryRun: *dryRun, Force: *force})
	if res != nil {
		printAggregateResult(stdout, res, *verbose, time.Since(start))
	}
	switch {
	case errors.Is(runErr, reconciler.ErrRefused):
		return exitError{exitRefused, runErr}
	case errors.Is(runErr, novaclient.ErrUnavailable):
		return exitError{exitNovaUnavailable, runErr}
	case runErr != nil:
		return exitError{exitPlacementError, runErr}
	case len(res.Plan.Unmapped) > 0:
		return exitError{exitUnmappedHosts, fmt.Errorf("%d host(s) without a resource provider", len(res.Plan.Unmapped))}
	}
	return nil
}

func printAggregateResult(w io.Writer, res *reconciler.AggregateResult, verbose bool, took time.Duration) {
	hosts := func(h []string) string {
		if len(h) == 0 {
			return "(no Nova host)"
		}
		return strings.Join(h, ",")
	}
	if verbose {
		fmt.Fprintf(w, "read Nova: %d aggregates, %d compute nodes on %d hosts\n", res.Read.Aggregates, res.Read.ComputeNodes, res.Read.Hosts)
		fmt.Fprintf(w, "read placement memberships %s\n", res.Strategy)
		for _, c := range res.Plan.Synced {
			fmt.Fprintf(w, "in sync: host %s: provider %s: aggregates %v\n", hosts(c.Hosts), c.Provider, c.Desired)
		}
	}
	for _, h := range res.Plan.Held {
		fmt.Fprintf(w, "held: provider %s: host %q listed in an aggregate without hypervisors; keeps %v\n", h.Provider, h.Host, h.Aggregates)
	}
	if res.Refused != "" {
		fmt.Fprintf(w, "refused: %s; nothing written (--force applies it)\n", res.Refused)
	}
	if res.Forced != "" {
		fmt.Fprintf(w, "forced: %s\n", res.Forced)
	}
	if res.DryRun || res.Refused != "" {
		for _, c := range res.Plan.Changes {
			fmt.Fprintf(w, "plan: host %s: provider %s: add %v remove %v\n", hosts(c.Hosts), c.Provider, c.Add, c.Remove)
		}
	} else {
		for _, a := range res.Applied {
			if a.Err != nil {
				fmt.Fprintf(w, "failed: host %s: provider %s: %v\n", hosts(a.Hosts), a.Provider, a.Err)
				continue
			}
			fmt.Fprintf(w, "synced: host %s: provider %s: added %v removed %v\n", hosts(a.Hosts), a.Provider, a.Added, a.Removed)
		}
	}
	for _, u := range res.Plan.Unmapped {
		fmt.Fprintf(w, "no provider: host %s: %s %v (aggregates %v)\n", u.Host, u.Reason(), u.MissingProviders, u.Aggregates)
	}
	fmt.Fprintf(w, "%d providers in sync, %d to change, %d associations drifted, %d written, %d conflicts, %d hosts without provider (%s)\n",
		res.Plan.InSync, len(res.Plan.Changes), res.Plan.Drift(), res.Writes(), res.Conflicts, len(res.Plan.Unmapped), took.Round(time.Millisecond))
}

// cmdJobs lists the reconciler's jobs or runs one now.
func cmdJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, common := newConfigFlagSet("jobs", "placement-syncd jobs [--config FILE] [list | run JOB]", stderr, configSpec{noDB: true})
	rest, cfg, err := common.parseLoadInterleaved(args)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch {
	case len(rest) == 0 || (len(rest) == 1 && rest[0] == "list"):
		var out struct {
			Jobs       []reconciler.JobStatus `json:"jobs"`
			Leadership reconciler.Leadership  `json:"leadership"`
		}
		if err := endpointCall(ctx, cfg.Reconciler, http.MethodGet, "/v1/jobs", nil, &out); err != nil {
			return err
		}
		printLeadership(stdout, out.Leadership)
		for _, j := range out.Jobs {
			fmt.Fprintf(stdout, "%s (%s):\n", j.Name, j.Schedule)
			for _, r := range j.Runs {
				fmt.Fprintf(stdout, "  %s %-8s %-7s %8s changes=%d drift=%d conflicts=%d give_ups=%d hosts_without_provider=%d %s",
					r.Start.Format(time.RFC3339), r.Trigger, r.Result, r.Duration.Round(time.Millisecond), r.Changes, r.Drift, r.Conflicts, r.GiveUps,
					len(r.HostsWithoutProvider), r.Detail)
				if r.Error != "" {
					fmt.Fprintf(stdout, " error: %s", r.Error)
				}
				fmt.Fprintln(stdout)
			}
		}
		return nil
	case len(rest) == 2 && rest[0] == "run":
		var rec reconciler.RunRecord
		if err := endpointCall(ctx, cfg.Reconciler, http.MethodPost, "/v1/jobs/"+rest[1]+"/run", nil, &rec); err != nil {
			return err
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
		if rec.Result != reconciler.ResultOK {
			return fmt.Errorf("job %s: %s", rest[1], rec.Error)
		}
		return nil
	}
	return usageError{fmt.Errorf("jobs: want 'list' or 'run JOB', got %q", strings.Join(rest, " "))}
}

// printLeadership says whether this replica of several runs the jobs.
func printLeadership(w io.Writer, l reconciler.Leadership) {
	switch {
	case !l.Replicated:
		return
	case l.Leader:
		fmt.Fprintf(w, "leader: this replica (%s) runs the jobs\n", l.Replica)
	default:
		fmt.Fprintf(w, "standby: this replica (%s) runs jobs only when asked; the leader runs them on schedule\n", l.Replica)
	}
}

// endpointCall calls the reconciler's local endpoint and decodes the
// JSON answer into out.
func endpointCall(ctx context.Context, rc config.ReconcilerConfig, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, rc.RunTimeout+10*time.Second)
	defer cancel()
	var reqBody io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		reqBody = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, assemble.LocalURL(rc.Listen)+path, reqBody)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if rc.Token != "" {
		req.Header.Set("X-Auth-Token", rc.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reconciler endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reconciler endpoint: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return fmt.Errorf("reconciler endpoint: %s %s: %d %s", method, path, resp.StatusCode, e.Error)
	}
	return json.Unmarshal(body, out)
}
