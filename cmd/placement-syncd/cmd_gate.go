package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// cmdGate shows the OWNER_NOVA gate (`gate` or `gate show`) or records
// the operator's override (`gate set open|closed|auto`). Both go to the
// running reconciler, or, when it is not reachable, to the state file.
func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := newConfigFlagSet("gate", "placement-syncd gate [show | set open|closed|auto] [--config FILE] [--json]", stderr, configSpec{noDB: true})
	asJSON := fs.Bool("json", false, "print JSON")
	rest, cfg, err := common.parseLoadInterleaved(args)
	if err != nil {
		return err
	}
	var g reconciler.GateState
	var source string
	switch {
	case len(rest) == 0 || (len(rest) == 1 && rest[0] == "show"):
		g, source, err = gateShow(ctx, cfg)
	case len(rest) == 2 && rest[0] == "set":
		g, source, err = gateSet(ctx, cfg, rest[1])
	default:
		return usageError{fmt.Errorf("gate: want 'show' or 'set open|closed|auto', got %q", strings.Join(rest, " "))}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(g)
	}
	printGate(stdout, g, source)
	return nil
}

// parseInterleaved parses flags given before, between or after the
// positional words (gate set open --config F) and returns the words.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{errReported}
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		words, args = append(words, args[0]), args[1:]
	}
}

func printGate(w io.Writer, g reconciler.GateState, source string) {
	state := "closed"
	if g.Open {
		state = "open"
	}
	fmt.Fprintf(w, "OWNER_NOVA gate: %s\nreason: %s\nrequired version: %d, minimum reported: %d, computes counted: %d, override: %s\n",
		state, g.Reason, g.Required, g.MinVersion, g.Computes, g.Override)
	if !g.OverrideSetAt.IsZero() {
		fmt.Fprintf(w, "override set: %s (placement-syncd gate set)\n", g.OverrideSetAt.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "pre-filter on: %v\n", g.PrefilterOn)
	if !g.OpenedAt.IsZero() {
		fmt.Fprintf(w, "opened: %s", g.OpenedAt.Format(time.RFC3339Nano))
		if !g.PrefilterAt.IsZero() {
			fmt.Fprintf(w, ", pre-filter on %s later (stamped first)", g.PrefilterAt.Sub(g.OpenedAt))
		}
		fmt.Fprintln(w)
	}
	if len(g.Behind) > 0 {
		fmt.Fprintf(w, "behind: %s\n", strings.Join(g.Behind, ", "))
	}
	if len(g.Unknown) > 0 {
		fmt.Fprintf(w, "no known version: %s\n", strings.Join(g.Unknown, ", "))
	}
	if len(g.CellDown) > 0 {
		fmt.Fprintf(w, "in a cell Nova cannot read (UNKNOWN): %s\n", strings.Join(g.CellDown, ", "))
	}
	if len(g.NoCell) > 0 {
		fmt.Fprintf(w, "in no configured cell database: %s\n", strings.Join(g.NoCell, ", "))
	}
	if g.ListError != "" {
		fmt.Fprintf(w, "compute list error: %s\n", g.ListError)
	}
	fmt.Fprintf(w, "source: %s\n", source)
}

// gateShow asks the running reconciler; offline, it evaluates the gate
// from the configuration and the state file, reading Nova's compute
// list itself when the configuration says where.
func gateShow(ctx context.Context, cfg config.Config) (reconciler.GateState, string, error) {
	var g reconciler.GateState
	err := endpointCall(ctx, cfg.Reconciler, http.MethodGet, "/v1/gate", nil, &g)
	if err == nil {
		return g, "reconciler at " + cfg.Reconciler.Listen, nil
	}
	g, oerr := offlineGate(ctx, cfg)
	if oerr != nil {
		return g, "", oerr
	}
	return g, fmt.Sprintf("state file %s (reconciler not reachable: %v)", cfg.Reconciler.StateFile, err), nil
}

// gateSet records the override in the running reconciler, or in the
// state file when it is not reachable (read at its next start).
func gateSet(ctx context.Context, cfg config.Config, override string) (reconciler.GateState, string, error) {
	switch override {
	case reconciler.GateAuto, reconciler.GateOpen, reconciler.GateClosed:
	default:
		return reconciler.GateState{}, "", usageError{fmt.Errorf("gate set: %q is not open, closed or auto", override)}
	}
	var g reconciler.GateState
	body := map[string]string{"override": override}
	err := endpointCall(ctx, cfg.Reconciler, http.MethodPost, "/v1/gate", body, &g)
	if err == nil {
		return g, "reconciler at " + cfg.Reconciler.Listen + " (recorded in its state file)", nil
	}
	state, serr := reconciler.OpenStateFile(cfg.Reconciler.StateFile)
	if serr != nil {
		return g, "", serr
	}
	if serr := state.SetGateOverride(reconciler.GateOverrideRecord{Override: override, SetAt: time.Now().UTC()}); serr != nil {
		return g, "", serr
	}
	g, oerr := offlineGate(ctx, cfg)
	if oerr != nil {
		return g, "", oerr
	}
	return g, fmt.Sprintf("state file %s (reconciler not reachable: %v)", cfg.Reconciler.StateFile, err), nil
}

// offlineGate evaluates the gate as the reconciler would at start.
func offlineGate(ctx context.Context, cfg config.Config) (reconciler.GateState, error) {
	rc := cfg.Reconciler
	state, err := reconciler.OpenStateFile(rc.StateFile)
	if err != nil {
		return reconciler.GateState{}, err
	}
	in := reconciler.GateInput{Required: rc.Gate.MinVersion, Override: rc.Gate.Override, Records: state.Services()}
	for _, s := range assemble.ConfiguredServices(rc) {
		s.Authenticated = true
		in.Records = append(in.Records, s)
	}
	src, err := novaclient.OpenComputes(ctx, assemble.NovaSettings(rc.Nova))
	if err != nil {
		return reconciler.GateState{}, err
	}
	if src != nil {
		// As the daemon does (reconciler.gate.max_staleness aside): a
		// list that cannot be read closes the gate.
		in.SetList(src.Computes(ctx))
	}
	var setAt time.Time
	if o := state.GateOverride(); o != nil {
		in.Override, setAt = o.Override, o.SetAt
	}
	g := reconciler.EvaluateGate(in)
	g.OverrideSetAt = setAt
	return g, nil
}
