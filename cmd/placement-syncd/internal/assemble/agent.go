package assemble

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/drivers/static"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// NewAgent maps the agent section to agent.Options and the drivers.
func NewAgent(ctx context.Context, c config.AgentConfig, version string, log *zap.Logger, reg prometheus.Registerer) (*agent.Agent, func(), error) {
	host := c.Host
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, nil, fmt.Errorf("agent: host name: %w", err)
		}
		host = h
	}
	popts := placementclient.Options{Endpoint: c.Placement.Endpoint, Token: c.Placement.Token}
	if c.Placement.Cloud != "" {
		popts.Keystone = &placementclient.KeystoneOptions{Cloud: c.Placement.Cloud, CloudsFile: c.Placement.CloudsFile}
		// The cloud's catalog (or its endpoint override) names Placement;
		// the default endpoint must not replace it.
		if popts.Endpoint == config.Default().Agent.Placement.Endpoint {
			popts.Endpoint = ""
		}
	}
	pc, err := placementclient.New(ctx, popts)
	if err != nil {
		return nil, nil, err
	}
	ds, closeAll, err := openDrivers(ctx, c, host, log)
	if err != nil {
		return nil, nil, err
	}
	limit, err := removallimit.Parse(c.MaxRetirements)
	if err != nil {
		closeAll()
		return nil, nil, config.Error{Err: fmt.Errorf("agent.max_retirements: %w", err)}
	}
	a, err := agent.New(agent.Options{
		Placement: pc, Drivers: ds, Host: host, Version: version,
		Interval: c.Interval, Concurrency: c.Concurrency, RefreshInterval: c.Refresh(),
		ServiceURL: c.ServiceURL, ServiceToken: c.ServiceToken, HeartbeatInterval: c.HeartbeatInterval,
		NovaComputeVersion: c.NovaComputeVersion, StateFile: c.StateFile, MaxRetirements: &limit,
		Logger: log, Registerer: reg,
	})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return a, closeAll, nil
}

// openDrivers opens the enabled drivers; the returned func closes them.
// A driver that cannot be opened is a configuration error.
func openDrivers(ctx context.Context, c config.AgentConfig, host string, log *zap.Logger) ([]drivers.Driver, func(), error) {
	// The static driver goes first: its providers may be the parents of
	// the others' (an FPGA's compute node).
	enabled := []struct {
		on   bool
		open func() (drivers.Driver, error)
	}{
		{c.Static.Enabled, func() (drivers.Driver, error) { return static.New(static.Options{File: c.Static.File}) }},
		{c.Ironic.Enabled, func() (drivers.Driver, error) {
			return ironic.New(ctx, ironic.Options{
				Endpoint: c.Ironic.Endpoint, Token: c.Ironic.Token, Cloud: c.Ironic.Cloud, CloudsFile: c.Ironic.CloudsFile,
				File: c.Ironic.File, Microversion: c.Ironic.Microversion, ConductorGroup: c.Ironic.ConductorGroup,
				Shard: c.Ironic.Shard, PageSize: c.Ironic.PageSize,
				SkipReserveInUse: c.Ironic.SkipReserveInUse, DeferToNova: c.Ironic.DeferToNova, Logger: log.Named("ironic"),
			})
		}},
		{c.FPGA.Enabled, func() (drivers.Driver, error) {
			return fpga.New(fpga.Options{
				Host: host, ComputeNodeUUID: c.FPGA.ComputeNodeUUID, ComputeNodeName: c.FPGA.ComputeNodeName,
				File: c.FPGA.File, SysfsRoot: c.FPGA.SysfsRoot, ProgramCommand: c.FPGA.ProgramCommand,
				ProgramTimeout: c.FPGA.ProgramTimeout, StateFile: c.FPGA.StateFile, Logger: log.Named("fpga"),
			})
		}},
	}
	var ds []drivers.Driver
	closeAll := func() {
		for _, d := range ds {
			_ = d.Close()
		}
	}
	for _, e := range enabled {
		if !e.on {
			continue
		}
		d, err := e.open()
		if err != nil {
			closeAll()
			return nil, nil, config.Error{Err: err}
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return nil, nil, config.Error{Err: fmt.Errorf("agent: no driver enabled (agent.ironic, agent.fpga or agent.static)")}
	}
	return ds, closeAll, nil
}
