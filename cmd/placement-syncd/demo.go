package main

// The demo's stand-in for the outside world. `serve` with configs/demo.yaml
// is the real product: the API, the reconciler and the agent, reading
// Ironic nodes, FPGA devices and Nova aggregates from files instead of
// from Ironic and Nova. `demo init` writes those files; `demo cycle` then
// plays Ironic, Nova and an operator: every period it rewrites the files
// to the next step of a fixed scenario, asks the agent for a pass and the
// reconciler for an aggregates run through their local endpoints (both
// would also notice by themselves, within agent.interval and the cron
// schedule), and now and then programs the FPGA through the agent.
// Nothing here writes to Placement.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// The demo's fixed names and uuids.
const (
	demoConductor   = "demo-conductor" // the nova-compute host of the Ironic nodes
	demoComputeUUID = "c0de0000-0000-4000-8000-000000000001"
	demoFPGADevice  = "0000:5e:00.0"
	demoRackA       = "a66a0000-0000-4000-8000-00000000000a"
	demoFPGAHosts   = "a66a0000-0000-4000-8000-00000000000f"
)

// demoNode is one Ironic node of the demo.
type demoNode struct {
	UUID, Name, ResourceClass string
}

var demoNodes = []demoNode{
	{"b0b00000-0000-4000-8000-000000000001", "bm-gold-1", "baremetal.gold"},
	{"b0b00000-0000-4000-8000-000000000002", "bm-gold-2", "baremetal.gold"},
	{"b0b00000-0000-4000-8000-000000000003", "bm-silver-1", "baremetal.silver"},
}

// nodeState is what Ironic would say about a node.
type nodeState struct {
	Provision   string
	Maintenance bool
}

var (
	available = nodeState{Provision: "available"}
	cleaning  = nodeState{Provision: "cleaning"}
	cleanWait = nodeState{Provision: "clean wait"}
	maint     = nodeState{Provision: "available", Maintenance: true}
)

// demoStep is the world at one step of the scenario.
type demoStep struct {
	Note  string
	Nodes [3]nodeState
	// FPGAHosts: the compute host is in Nova's aggregate fpga-hosts.
	FPGAHosts bool
	// Program, when set, is the image the FPGA is programmed with.
	Program string
}

// demoSteps is the scenario, steps 1 to 6, one per period, wrapping
// around. The last step is the state `demo init` writes, so that every
// round starts from it.
var demoSteps = []demoStep{
	{Note: "bm-gold-1 starts cleaning (reserved = total); Nova adds demo-compute to aggregate fpga-hosts",
		Nodes: [3]nodeState{cleaning, available, available}, FPGAHosts: true},
	{Note: "bm-gold-1 waits for cleaning; bm-gold-2 goes into maintenance; the FPGA is programmed with crypto-v2",
		Nodes: [3]nodeState{cleanWait, maint, available}, FPGAHosts: true, Program: "crypto-v2"},
	{Note: "bm-gold-1 is clean and available again (reserved = 0)",
		Nodes: [3]nodeState{available, maint, available}, FPGAHosts: true},
	{Note: "bm-gold-2 leaves maintenance; Nova removes demo-compute from fpga-hosts",
		Nodes: [3]nodeState{available, available, available}},
	{Note: "bm-silver-1 starts cleaning; the FPGA is programmed back to gzip-v1",
		Nodes: [3]nodeState{available, available, cleaning}, Program: "gzip-v1"},
	{Note: "bm-silver-1 is clean: every node available, as demo init wrote them; Nova aggregate rack-a holds demo-conductor (its 3 nodes)",
		Nodes: [3]nodeState{available, available, available}},
}

// demoFiles are the sources the config's agent and reconciler read.
type demoFiles struct {
	Static, Ironic, FPGA, Nova string
	Host                       string // agent.host: the compute host with the FPGA
}

func demoFilesFrom(cfg config.Config) (demoFiles, error) {
	f := demoFiles{Static: cfg.Agent.Static.File, Ironic: cfg.Agent.Ironic.File, FPGA: cfg.Agent.FPGA.File,
		Nova: cfg.Reconciler.Nova.File, Host: cfg.Agent.Host}
	if f.Static == "" || f.Ironic == "" || f.FPGA == "" || f.Nova == "" || f.Host == "" {
		return f, errors.New("demo: the config needs agent.host, agent.static.file, agent.ironic.file, agent.fpga.file and reconciler.nova.file (see configs/demo.yaml)")
	}
	return f, nil
}

// writeInit writes every source in its step-0 state.
func (f demoFiles) writeInit() error {
	compute := map[string]any{"providers": []map[string]any{{
		"uuid": demoComputeUUID, "name": f.Host, "owner": "OWNER_NOVA", "traits": []string{"COMPUTE_NODE"},
		"inventories": map[string]any{
			"VCPU":      map[string]any{"total": 16, "allocation_ratio": 4.0},
			"MEMORY_MB": map[string]any{"total": 65536, "reserved": 512},
			"DISK_GB":   map[string]any{"total": 1000},
		},
	}}}
	b, err := yaml.Marshal(compute)
	if err != nil {
		return err
	}
	header := "# Written by `placement-syncd demo init`: the compute node that nova-compute\n# would report for " + f.Host + "; the FPGA is its child.\n"
	if err := writeAtomic(f.Static, append([]byte(header), b...)); err != nil {
		return err
	}
	devices := map[string]any{"devices": []map[string]any{{
		"pci_address": demoFPGADevice, "vendor": "8086", "product": "0b30", "function": "gzip-v1", "regions": 2,
	}}}
	if err := writeJSON(f.FPGA, devices); err != nil {
		return err
	}
	return f.write(demoSteps[len(demoSteps)-1])
}

// write rewrites the Ironic and Nova files for a step.
func (f demoFiles) write(s demoStep) error {
	nodes := make([]map[string]any, len(demoNodes))
	for i, n := range demoNodes {
		st := s.Nodes[i]
		reason := any(nil)
		if st.Maintenance {
			reason = "demo: firmware upgrade"
		}
		nodes[i] = map[string]any{
			"uuid": n.UUID, "name": n.Name, "resource_class": n.ResourceClass,
			"power_state": "power off", "provision_state": st.Provision, "target_provision_state": nil,
			"maintenance": st.Maintenance, "maintenance_reason": reason, "instance_uuid": nil,
			"traits": []string{"CUSTOM_DEMO"}, "conductor_group": "",
		}
	}
	if err := writeJSON(f.Ironic, map[string]any{"nodes": nodes}); err != nil {
		return err
	}
	hypervisors := []map[string]any{{
		"id": demoComputeUUID, "hypervisor_hostname": f.Host, "service": map[string]any{"host": f.Host},
	}}
	for _, n := range demoNodes {
		hypervisors = append(hypervisors, map[string]any{
			"id": n.UUID, "hypervisor_hostname": n.UUID, "service": map[string]any{"host": demoConductor},
		})
	}
	fpgaHosts := []string{}
	if s.FPGAHosts {
		fpgaHosts = []string{f.Host}
	}
	aggregates := []map[string]any{
		{"uuid": demoRackA, "name": "rack-a", "hosts": []string{demoConductor}},
		{"uuid": demoFPGAHosts, "name": "fpga-hosts", "hosts": fpgaHosts},
	}
	// os-services: the nova-compute of the agent's host and the Ironic
	// conductor's, whose versions the gate needs.
	services := []map[string]any{
		{"binary": "nova-compute", "host": f.Host, "state": "up", "status": "enabled", "forced_down": false},
		{"binary": "nova-compute", "host": demoConductor, "state": "up", "status": "enabled", "forced_down": false},
	}
	// servers and migrations (GET /servers?all_tenants=1 and
	// /os-migrations): the demo boots no instance, so the audit finds any
	// allocation made by hand an orphan.
	return writeJSON(f.Nova, map[string]any{"aggregates": aggregates, "hypervisors": hypervisors, "services": services,
		"servers": []any{}, "migrations": []any{}})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// writeAtomic replaces path in one rename, so that a reader never sees a
// half-written file.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// demoCycler advances the scenario and pokes the local endpoints.
type demoCycler struct {
	files                          demoFiles
	agentURL, agentToken           string
	reconcilerURL, reconcilerToken string
	period                         time.Duration
	log                            *zap.Logger
	hc                             *http.Client
	readinessWindow                time.Duration
}

// run waits for the agent's endpoint, then makes steps 1 to 6 one per
// period, wrapping around, until ctx ends or, with steps > 0, that many
// steps were made.
func (c *demoCycler) run(ctx context.Context, steps int) error {
	if err := c.waitReady(ctx); err != nil {
		return err
	}
	t := time.NewTicker(c.period)
	defer t.Stop()
	for n := 1; steps <= 0 || n <= steps; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := c.step(ctx, n); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.log.Warn("demo step incomplete", zap.Int("step", n), zap.Error(err))
		}
	}
	return nil
}

// waitReady polls the agent's status until it answers.
func (c *demoCycler) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.readinessWindow)
	defer cancel()
	for {
		if _, err := c.call(ctx, http.MethodGet, c.agentURL+"/v1/status", c.agentToken, nil); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("demo: the agent's local endpoint %s did not answer: is `placement-syncd serve --config configs/demo.yaml` running?", c.agentURL)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// step makes the cycle's nth step (from 1), the scenario's step
// (n-1)%6+1: rewrite the sources, ask for a pass and a run, and program
// the FPGA if the step says so.
func (c *demoCycler) step(ctx context.Context, n int) error {
	i := (n - 1) % len(demoSteps)
	s := demoSteps[i]
	c.log.Info(fmt.Sprintf("demo step %d/%d: %s", i+1, len(demoSteps), s.Note))
	if err := c.files.write(s); err != nil {
		return err
	}
	var errs []error
	if _, err := c.call(ctx, http.MethodPost, c.agentURL+"/v1/resync", c.agentToken, nil); err != nil {
		errs = append(errs, err)
	}
	if err := c.runAggregates(ctx); err != nil {
		errs = append(errs, err)
	}
	if s.Program != "" {
		body, _ := json.Marshal(map[string]any{"device": demoFPGADevice, "image": s.Program})
		out, err := c.call(ctx, http.MethodPost, c.agentURL+"/v1/fpga/program", c.agentToken, body)
		if err != nil {
			errs = append(errs, err)
		} else {
			c.log.Info("demo: FPGA programmed", zap.String("device", demoFPGADevice), zap.String("answer", strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

// runAggregates asks for an aggregates run, waiting out a run already in
// progress (409) for a few seconds.
func (c *demoCycler) runAggregates(ctx context.Context) error {
	url := c.reconcilerURL + "/v1/jobs/aggregates/run"
	var err error
	for range 20 {
		if _, err = c.call(ctx, http.MethodPost, url, c.reconcilerToken, nil); !errors.Is(err, errBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return err
}

var errBusy = errors.New("busy (409)")

func (c *demoCycler) call(ctx context.Context, method, url, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusConflict:
		return out, fmt.Errorf("%s %s: %w: %s", method, url, errBusy, out)
	case resp.StatusCode/100 != 2:
		return out, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}

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
	files, err := demoFilesFrom(cfg)
	if err != nil {
		return usageError{err}
	}
	if args[0] == "init" {
		if err := files.writeInit(); err != nil {
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
	c := newDemoCycler(cfg, files, *period, log)
	if *agentAddr != "" {
		c.agentURL = assemble.LocalURL(*agentAddr)
	}
	if *reconcilerAddr != "" {
		c.reconcilerURL = assemble.LocalURL(*reconcilerAddr)
	}
	return c.run(ctx, *steps)
}

func newDemoCycler(cfg config.Config, files demoFiles, period time.Duration, log *zap.Logger) *demoCycler {
	return &demoCycler{
		files:    files,
		agentURL: assemble.LocalURL(cfg.Agent.Local.Listen), agentToken: cfg.Agent.Local.Token,
		reconcilerURL: assemble.LocalURL(cfg.Reconciler.Listen), reconcilerToken: cfg.Reconciler.Token,
		period: period, log: log.Named("demo"),
		hc:              &http.Client{Timeout: cfg.Agent.FPGA.ProgramTimeout + time.Minute},
		readinessWindow: time.Minute,
	}
}
