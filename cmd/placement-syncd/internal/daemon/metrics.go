package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/metrics/endpoint"
)

// metricsEndpoint decides where /metrics is served from metrics.enabled
// and metrics.listen.
type metricsEndpoint struct {
	cfg     config.MetricsConfig
	handler http.Handler
	addr    string // the bound metrics.listen, once addActor has run
}

func newMetricsEndpoint(cfg config.MetricsConfig, reg *prometheus.Registry, log *zap.Logger) *metricsEndpoint {
	return &metricsEndpoint{cfg: cfg, handler: endpoint.Handler(reg, log.Named("metrics"))}
}

// onAPI is the handler the API listener serves at /metrics, or nil.
func (m *metricsEndpoint) onAPI() http.Handler {
	if m.cfg.Enabled && m.cfg.Listen == "" {
		return m.handler
	}
	return nil
}

// addActor adds the metrics listener to actors when /metrics has a
// listener of its own.
func (m *metricsEndpoint) addActor(actors map[string]actor, grace time.Duration) error {
	if !m.cfg.Enabled || m.cfg.Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen for metrics on %s: %w", m.cfg.Listen, err)
	}
	actors["metrics"] = metricsServer{srv: endpoint.Server{Handler: m.handler, Grace: grace}, ln: ln}
	m.addr = ln.Addr().String()
	return nil
}

// describe says where /metrics is, for the start-up log line.
func (m *metricsEndpoint) describe(apiAddr string) string {
	switch {
	case !m.cfg.Enabled:
		return "disabled"
	case m.cfg.Listen == "":
		return "http://" + apiAddr + metrics.Path
	}
	return "http://" + m.addr + metrics.Path
}

// metricsServer adapts endpoint.Server to actor, owning its listener.
type metricsServer struct {
	srv endpoint.Server
	ln  net.Listener
}

func (a metricsServer) Run(ctx context.Context) error { return a.srv.Run(ctx, a.ln) }
