package daemon

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// RunAgent runs the agent, its local endpoint and its /metrics listener
// until ctx ends.
func RunAgent(ctx context.Context, cfg config.Config, a *agent.Agent, reg *prometheus.Registry, log *zap.Logger) error {
	actors := map[string]actor{"agent": agentActor{a}}
	if cfg.Agent.Local.Listen != "" && cfg.Agent.Local.Token != "" {
		ln, err := net.Listen("tcp", cfg.Agent.Local.Listen)
		if err != nil {
			return fmt.Errorf("agent: listen on %s: %w", cfg.Agent.Local.Listen, err)
		}
		actors["agent-local"] = agentLocal{a: a, ln: ln, token: cfg.Agent.Local.Token}
		log.Info("agent local endpoint", zap.String("listen", ln.Addr().String()))
	} else {
		log.Info("local endpoint off: agent.local.token is empty")
	}
	// An agent host has no API listener: /metrics always gets its own.
	mcfg := cfg.Metrics
	if mcfg.Listen == "" {
		mcfg.Listen = defaultAgentMetricsListen
	}
	mx := newMetricsEndpoint(mcfg, reg, log)
	if err := mx.addActor(actors, 5*time.Second); err != nil {
		closeListeners(actors)
		return err
	}
	log.Info("agent started", zap.String("placement", cfg.Agent.Placement.Endpoint), zap.Duration("interval", cfg.Agent.Interval),
		zap.String("metrics", mx.describe("")))
	return runActors(ctx, actors)
}
