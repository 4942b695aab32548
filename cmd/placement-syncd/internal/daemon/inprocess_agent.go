package daemon

import (
	"context"
	"fmt"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// agentEnabled reports whether the config enables any agent driver; serve
// then runs the agent in-process (the all-in-one deployment).
func agentEnabled(c config.AgentConfig) bool {
	return c.Ironic.Enabled || c.FPGA.Enabled || c.Static.Enabled
}

// withAgent builds the in-process agent and, when agent.local.token is
// set, its local endpoint, as actors. The agent reports over HTTP to this
// process's own API at apiAddr, like any remote agent would, so that it
// exercises the same client code path; agent.placement.endpoint is
// therefore replaced (its token or cloud are kept). When
// agent.service_url is empty and the reconciler runs here, the service
// record goes to the reconciler's endpoint at reconcilerAddr, so that the
// version gate sees this host. The returned func closes the drivers once
// the actors have stopped.
func withAgent(ctx context.Context, cfg config.Config, version, apiAddr, reconcilerAddr string, log *zap.Logger, reg prometheus.Registerer) (map[string]actor, func(), error) {
	if !agentEnabled(cfg.Agent) {
		return nil, func() {}, nil
	}
	ac := cfg.Agent
	ac.Placement.Endpoint = assemble.LocalURL(apiAddr)
	if ac.ServiceURL == "" && reconcilerAddr != "" {
		ac.ServiceURL = assemble.LocalURL(reconcilerAddr) + "/v1/services"
		ac.ServiceToken = cfg.Reconciler.Token
	}
	a, closeDrivers, err := assemble.NewAgent(ctx, ac, version, log, reg)
	if err != nil {
		return nil, nil, err
	}
	actors := map[string]actor{"agent": agentActor{a}}
	if ac.Local.Listen == "" || ac.Local.Token == "" {
		log.Info("agent local endpoint off: agent.local.token is empty")
		return actors, closeDrivers, nil
	}
	ln, err := net.Listen("tcp", ac.Local.Listen)
	if err != nil {
		closeDrivers()
		return nil, nil, fmt.Errorf("agent: listen on %s: %w", ac.Local.Listen, err)
	}
	log.Info("agent local endpoint", zap.String("listen", ln.Addr().String()))
	actors["agent-local"] = agentLocal{a: a, ln: ln, token: ac.Local.Token}
	return actors, closeDrivers, nil
}

// agentActor adapts agent.Agent to actor.
type agentActor struct{ a *agent.Agent }

func (x agentActor) Run(ctx context.Context) error { return x.a.Run(ctx) }

// agentLocal serves the agent's local endpoint on its listener.
type agentLocal struct {
	a     *agent.Agent
	ln    net.Listener
	token string
}

func (x agentLocal) Run(ctx context.Context) error { return x.a.ServeLocal(ctx, x.ln, x.token) }
