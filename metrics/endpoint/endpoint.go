// Package endpoint serves a Prometheus registry over HTTP, on the API
// listener or on a listener of its own. It is apart from package metrics so
// that components which only register metrics do not pull in an HTTP server.
package endpoint

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Handler serves the registry in the Prometheus text (or, when asked,
// OpenMetrics) format. Scrapes of it are counted in
// promhttp_metric_handler_requests_total. Errors from a collector are
// logged and the remaining metrics are still served, so one failing
// collector does not blind the whole scrape.
func Handler(reg *prometheus.Registry, log *zap.Logger) http.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            zapErrorLog{log},
		ErrorHandling:       promhttp.ContinueOnError,
		Registry:            reg,
		Timeout:             30 * time.Second,
		MaxRequestsInFlight: 4,
	})
	return promhttp.InstrumentMetricHandler(reg, h)
}

// zapErrorLog adapts zap to promhttp.Logger.
type zapErrorLog struct{ log *zap.Logger }

func (l zapErrorLog) Println(v ...any) {
	l.log.Warn("metrics gathering", zap.String("error", fmt.Sprint(v...)))
}

// Server serves Handler on a listener of its own (metrics.listen), for
// deployments that keep /metrics off the API port or have no API.
type Server struct {
	Handler http.Handler
	// Grace is how long in-flight scrapes may run after shutdown starts.
	Grace time.Duration
}

// Run serves GET /metrics on ln until ctx ends; other paths are 404.
func (s Server) Run(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, s.Handler)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	served, shutdown := httpserve.Run(ctx, srv, ln, s.Grace)
	if shutdown != nil {
		return fmt.Errorf("shut down metrics listener: %w", shutdown)
	}
	if served != nil {
		return fmt.Errorf("serve metrics: %w", served)
	}
	return nil
}
