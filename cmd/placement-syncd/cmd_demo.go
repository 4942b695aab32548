package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/demo"
)

// cmdDemo runs `placement-syncd demo init|cycle`.
func cmdDemo(ctx context.Context, args []string, _, stderr io.Writer) error {
	const synopsis = "placement-syncd demo init|cycle --config FILE [--period D] [--steps N] [--agent ADDR] [--reconciler ADDR]"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintf(stderr, "usage: %s\n  init   write the demo's input files\n  cycle  drive the demo through its steps\n", synopsis)
		return errHelp
	}
	if len(args) == 0 || (args[0] != "init" && args[0] != "cycle") {
		return usageError{errors.New("demo: expected subcommand init or cycle")}
	}
	fs := newFlagSet("demo "+args[0], synopsis, stderr)
	common := registerConfig(fs, configSpec{path: "configs/demo.yaml", usage: "the demo's `file` (the one serve runs with)", noDB: true})
	period := fs.Duration("period", 10*time.Second, "cycle: time between steps")
	steps := fs.Int("steps", 0, "cycle: stop after this many steps (0: until interrupted)")
	agentAddr := fs.String("agent", "", "cycle: the agent's local endpoint `address` (default agent.local.listen)")
	reconcilerAddr := fs.String("reconciler", "", "cycle: the reconciler's endpoint `address` (default reconciler.listen)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	files, err := demo.FilesFrom(cfg)
	if err != nil {
		return usageError{err}
	}
	if args[0] == "init" {
		if err := files.WriteInit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "demo: wrote %s, %s, %s and %s\n", files.Static, files.Ironic, files.FPGA, files.Nova)
		return nil
	}
	if cfg.Agent.Local.Token == "" {
		return usageError{errors.New("demo cycle: agent.local.token is empty, so the agent's local endpoint is off")}
	}
	if *period <= 0 {
		return usageError{errors.New("demo cycle: --period must be positive")}
	}
	log, err := assemble.NewLogger(cfg.Log, stderr)
	if err != nil {
		return usageError{err}
	}
	defer log.Sync() //nolint:errcheck // nothing useful to do if stderr is gone
	c := demo.NewCycler(cfg, files, *period, log)
	if *agentAddr != "" {
		c.AgentURL = assemble.LocalURL(*agentAddr)
	}
	if *reconcilerAddr != "" {
		c.ReconcilerURL = assemble.LocalURL(*reconcilerAddr)
	}
	return c.Run(ctx, *steps)
}
