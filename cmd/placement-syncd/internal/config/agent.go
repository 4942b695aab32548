package config

import (
	"net/url"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
)

// AgentConfig configures `placement-syncd agent`: the drivers that report
// this host's hardware and the Placement they report to.
type AgentConfig struct {
	// Host names this host (service record, FPGA provider names); empty
	// means the OS host name.
	Host            string               `yaml:"host"`
	Interval        time.Duration        `yaml:"interval"`
	Concurrency     int                  `yaml:"concurrency"`
	RefreshInterval time.Duration        `yaml:"refresh_interval"`
	Placement       AgentPlacementConfig `yaml:"placement"`
	Local           AgentLocalConfig     `yaml:"local"`
	ServiceURL      string               `yaml:"service_url"`
	ServiceToken    string               `yaml:"service_token"`
	// NovaComputeVersion is the service version of the nova-compute on
	// this host, reported to the reconciler's gate (0: unknown, which
	// keeps the gate closed when no cell database gives it).
	NovaComputeVersion int           `yaml:"nova_compute_version"`
	HeartbeatInterval  time.Duration `yaml:"heartbeat_interval"`
	// StateFile keeps the providers this agent reported across restarts,
	// so that a node deleted from Ironic while the agent was down is still
	// retired; empty: remembered only while the process runs.
	StateFile string `yaml:"state_file"`
	// MaxRetirements bounds the vanished providers one pass retires: a
	// count ("5") or a percentage of those reported ("10%").
	MaxRetirements string       `yaml:"max_retirements"`
	Ironic         IronicConfig `yaml:"ironic"`
	FPGA           FPGAConfig   `yaml:"fpga"`
	Static         StaticConfig `yaml:"static"`
}

// AgentPlacementConfig is where the agent reports: a noauth endpoint with
// a token, or a clouds.yaml cloud (Keystone).
type AgentPlacementConfig struct {
	Endpoint   string `yaml:"endpoint"`
	Token      string `yaml:"token"`
	Cloud      string `yaml:"cloud"`
	CloudsFile string `yaml:"clouds_file"`
}

// AgentLocalConfig is the agent's local endpoint (resync, FPGA program).
type AgentLocalConfig struct {
	Listen string `yaml:"listen"`
	Token  string `yaml:"token"`
}

// Refresh is agent.refresh_interval as agent.Options takes it, where 0
// means the default: 0 in the file turns the periodic re-read off.
func (c AgentConfig) Refresh() time.Duration {
	if c.RefreshInterval == 0 {
		return -1
	}
	return c.RefreshInterval
}

// IronicConfig configures drivers/ironic.
type IronicConfig struct {
	Enabled          bool   `yaml:"enabled"`
	Endpoint         string `yaml:"endpoint"`
	Token            string `yaml:"token"`
	Cloud            string `yaml:"cloud"`
	CloudsFile       string `yaml:"clouds_file"`
	File             string `yaml:"file"`
	Microversion     string `yaml:"microversion"`
	ConductorGroup   string `yaml:"conductor_group"`
	Shard            string `yaml:"shard"`
	PageSize         int    `yaml:"page_size"`
	SkipReserveInUse bool   `yaml:"skip_reserve_in_use"`
	DeferToNova      bool   `yaml:"defer_to_nova"`
}

// FPGAConfig configures drivers/fpga.
type FPGAConfig struct {
	Enabled         bool          `yaml:"enabled"`
	File            string        `yaml:"file"`
	SysfsRoot       string        `yaml:"sysfs_root"`
	ComputeNodeUUID string        `yaml:"compute_node_uuid"`
	ComputeNodeName string        `yaml:"compute_node_name"`
	ProgramCommand  []string      `yaml:"program_command"`
	ProgramTimeout  time.Duration `yaml:"program_timeout"`
	// StateFile keeps failed programmings across restarts (empty: in
	// memory only, so a restart releases a failed device).
	StateFile string `yaml:"state_file"`
}

// StaticConfig configures drivers/static.
type StaticConfig struct {
	Enabled bool   `yaml:"enabled"`
	File    string `yaml:"file"`
}

const (
	defaultAgentInterval      = 10 * time.Second
	defaultAgentConcurrency   = 8
	defaultAgentRefresh       = agent.DefaultRefreshInterval
	defaultAgentPlacement     = "http://127.0.0.1:8778"
	defaultAgentToken         = "admin"
	defaultAgentLocalListen   = "127.0.0.1:8780"
	defaultAgentHeartbeat     = time.Minute
	defaultFPGAProgramTimeout = fpga.DefaultProgramTimeout
)

func defaultAgentConfig() AgentConfig {
	return AgentConfig{
		Interval:          defaultAgentInterval,
		Concurrency:       defaultAgentConcurrency,
		RefreshInterval:   defaultAgentRefresh,
		Placement:         AgentPlacementConfig{Endpoint: defaultAgentPlacement, Token: defaultAgentToken},
		Local:             AgentLocalConfig{Listen: defaultAgentLocalListen},
		HeartbeatInterval: defaultAgentHeartbeat,
		MaxRetirements:    agent.DefaultMaxRetirements().String(),
		Ironic:            IronicConfig{Microversion: ironic.DefaultMicroversion, DeferToNova: true},
		FPGA:              FPGAConfig{ProgramCommand: []string{}, ProgramTimeout: defaultFPGAProgramTimeout},
	}
}

// checkAgent checks the agent section.
func checkAgent(cfg *Config, p *problems) {
	c := cfg.Agent
	if c.Interval <= 0 {
		p.bad("agent.interval", "must be positive, got %s", c.Interval)
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		p.bad("agent.concurrency", "must be from 1 to 256, got %d", c.Concurrency)
	}
	if c.RefreshInterval < 0 {
		p.bad("agent.refresh_interval", "must not be negative (0 turns the periodic re-read off), got %s", c.RefreshInterval)
	}
	if c.HeartbeatInterval <= 0 {
		p.bad("agent.heartbeat_interval", "must be positive, got %s", c.HeartbeatInterval)
	}
	checkURL := func(key, v string) {
		if v == "" {
			return
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.bad(key, "invalid URL %q (want http:// or https://)", v)
		}
	}
	checkURL("agent.placement.endpoint", c.Placement.Endpoint)
	checkURL("agent.service_url", c.ServiceURL)
	checkURL("agent.ironic.endpoint", c.Ironic.Endpoint)
	if c.Placement.Endpoint == "" && c.Placement.Cloud == "" {
		p.bad("agent.placement.endpoint", "set an endpoint or a cloud")
	}
	if c.Local.Listen != "" {
		if err := listenError(c.Local.Listen); err != nil {
			p.bad("agent.local.listen", "invalid address %q: %v", c.Local.Listen, err)
		}
	}
	if c.Ironic.Enabled {
		n := 0
		for _, s := range []string{c.Ironic.Endpoint, c.Ironic.Cloud, c.Ironic.File} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			p.bad("agent.ironic", "set exactly one of endpoint, cloud or file")
		}
		if err := ironic.CheckMicroversion(c.Ironic.Microversion, c.Ironic.Shard != ""); err != nil {
			p.bad("agent.ironic.microversion", "%v", err)
		}
		if c.Ironic.PageSize < 0 {
			p.bad("agent.ironic.page_size", "must not be negative (0 takes Ironic's [api] max_limit), got %d", c.Ironic.PageSize)
		}
	}
	if _, err := removallimit.Parse(c.MaxRetirements); err != nil {
		p.bad("agent.max_retirements", "%v", err)
	}
	if c.FPGA.Enabled && c.FPGA.File == "" && c.FPGA.SysfsRoot == "" {
		p.bad("agent.fpga", "set file or sysfs_root")
	}
	if c.FPGA.ProgramTimeout <= 0 {
		p.bad("agent.fpga.program_timeout", "must be positive, got %s", c.FPGA.ProgramTimeout)
	}
	if c.Static.Enabled && c.Static.File == "" {
		p.bad("agent.static.file", "must be set when the static driver is enabled")
	}
}
