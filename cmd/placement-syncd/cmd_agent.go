package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/daemon"
	"github.com/placement-syncd/placement-syncd/internal/localapi"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
)

// agentSynopsis is the agent command's usage line.
const agentSynopsis = "placement-syncd agent --config FILE [--once [--dry-run] [--max-retirements N|N%]]"

// cmdAgent runs agentSynopsis. With --once it makes one pass and exits 0
// only if every driver fully synced; with --dry-run as well it prints
// that pass's plan to stdout and writes nothing. --max-retirements
// overrides agent.max_retirements for that one pass, the way out of a
// refused retirement once the operator has checked it.
func cmdAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent", agentSynopsis, stderr)
	common := registerConfig(fs, configSpec{usage: "YAML configuration `file` (its agent section)", noDB: true})
	once := fs.Bool("once", false, "make one sync pass and exit (0: fully synced)")
	dryRun := fs.Bool("dry-run", false, "with --once: print the pass's plan, one line per intended write and per provider left to another service, and write nothing to Placement")
	maxRetire := fs.String("max-retirements", "", "with --once: agent.max_retirements for this pass only (`N or N%`), "+
		"to retire vanished providers a refusal holds reserved")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if common.path == "" {
		return usageError{fmt.Errorf("agent: --config is required")}
	}
	if *dryRun && !*once {
		return usageError{fmt.Errorf("agent: --dry-run needs --once")}
	}
	if *maxRetire != "" && !*once {
		return usageError{fmt.Errorf("agent: --max-retirements needs --once (it overrides the limit for one pass)")}
	}
	if _, err := removallimit.Parse(*maxRetire); *maxRetire != "" && err != nil {
		return usageError{fmt.Errorf("agent: --max-retirements: %w", err)}
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	log, err := assemble.NewLogger(cfg.Log, stderr)
	if err != nil {
		return usageError{err}
	}
	if *maxRetire != "" {
		cfg.Agent.MaxRetirements = *maxRetire
	}
	defer log.Sync() //nolint:errcheck // nothing useful to do if stderr is gone
	build := readBuildInfo()
	reg := assemble.NewRegistry(build)
	a, closeDrivers, err := assemble.NewAgent(ctx, cfg.Agent, build.Version, log, reg)
	if err != nil {
		return err
	}
	defer closeDrivers()
	switch {
	case *dryRun:
		return printPlans(stdout, a.DryRun(ctx))
	case *once:
		if err := a.SyncOnce(ctx); err != nil {
			return fmt.Errorf("agent: pass failed: %w", err)
		}
		return nil
	}
	return daemon.RunAgent(ctx, cfg, a, reg, log)
}

// printPlans prints each driver's plan, "driver: line" per line (the
// providers it leaves to another service, then its writes), and a
// summary; a driver that could not be planned fully is an error.
func printPlans(w io.Writer, plans []agent.Plan) error {
	writes, deferred := 0, 0
	var errs []error
	for _, pl := range plans {
		if pl.Refused != "" {
			fmt.Fprintf(w, "%s: %s\n", pl.Driver, pl.Refused)
		}
		for _, line := range pl.Deferred {
			fmt.Fprintf(w, "%s: %s\n", pl.Driver, line)
		}
		for _, line := range pl.Writes {
			fmt.Fprintf(w, "%s: %s\n", pl.Driver, line)
		}
		writes += len(pl.Writes)
		deferred += len(pl.Deferred)
		if pl.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pl.Driver, pl.Err))
		}
	}
	left := ""
	if deferred > 0 {
		left = fmt.Sprintf(", %d providers left to the service that reports them", deferred)
	}
	fmt.Fprintf(w, "dry run: %d writes planned%s, nothing written\n", writes, left)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agent: dry run incomplete: %w", err)
	}
	return nil
}

// cmdFPGA runs `placement-syncd fpga program --device D --image I
// [--force]` or `placement-syncd fpga clear --device D` against the local
// agent's endpoint.
func cmdFPGA(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The command table has checked the word (program or clear).
	sub := args[0]
	usage := "placement-syncd fpga program --device PCI_ADDRESS --image IMAGE [--force] [--config FILE]"
	if sub == "clear" {
		usage = "placement-syncd fpga clear --device PCI_ADDRESS [--config FILE]\n" +
			"  releases a device whose programming failed or timed out, without programming it"
	}
	fs := newFlagSet("fpga "+sub, usage, stderr)
	common := registerConfig(fs, configSpec{usage: "YAML configuration `file` (agent.local.listen and agent.local.token)", noDB: true})
	device := fs.String("device", "", "PCI `address` of the FPGA, e.g. 0000:5e:00.0")
	var image *string
	var force *bool
	if sub == "program" {
		image = fs.String("image", "", "bitstream `image` passed to the programming command")
		force = fs.Bool("force", false, "program even if the device has allocations")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	req := agent.ProgramRequest{Device: *device}
	if sub == "program" {
		req.Image, req.Force = *image, *force
		if req.Image == "" {
			return usageError{fmt.Errorf("fpga program: --device and --image are required")}
		}
	}
	if req.Device == "" {
		return usageError{fmt.Errorf("fpga %s: --device is required", sub)}
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	return postLocal(ctx, cfg, sub, req, stdout)
}

// postLocal sends one FPGA request to the local agent and prints its answer.
func postLocal(ctx context.Context, cfg config.Config, sub string, body agent.ProgramRequest, stdout io.Writer) error {
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, cfg.Agent.FPGA.ProgramTimeout+time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+cfg.Agent.Local.Listen+"/v1/fpga/"+sub, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", cfg.Agent.Local.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fpga %s: the agent's local endpoint: %w", sub, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("fpga %s: read the agent's answer: %w", sub, err)
	}
	fmt.Fprintf(stdout, "%s", out)
	if resp.StatusCode != http.StatusOK {
		// The agent's error text, e.g. 404 Not Found: unknown device: ...
		return fmt.Errorf("fpga %s: %w", sub, localapi.ReadError(resp.StatusCode, out))
	}
	return nil
}
