package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// inProcess is the reconciler when it runs in this process: its actors
// (the jobs and the local endpoint) and the endpoint's bound address.
type inProcess struct {
	r        *reconciler.Reconciler
	actors   map[string]actor
	endpoint string
}

// startReconciler builds the reconciler, when enabled, over this
// process's API at apiAddr, and listens for its endpoint.
func startReconciler(ctx context.Context, cfg config.Config, apiAddr string, lead assemble.Leadership, log *zap.Logger, reg prometheus.Registerer) (inProcess, error) {
	rc := cfg.Reconciler
	if !rc.Enabled {
		return inProcess{}, nil
	}
	opts, err := assemble.ReconcilerOptions(ctx, rc, assemble.LocalURL(apiAddr), lead, log.Named("reconciler"), reg)
	if err != nil {
		return inProcess{}, fmt.Errorf("reconciler: %w", err)
	}
	r, err := reconciler.New(opts)
	if err != nil {
		return inProcess{}, fmt.Errorf("reconciler: %w", err)
	}
	ln, err := net.Listen("tcp", rc.Listen)
	if err != nil {
		return inProcess{}, fmt.Errorf("reconciler: listen on %s: %w", rc.Listen, err)
	}
	log.Info("reconciler endpoint", zap.String("listen", ln.Addr().String()))
	return inProcess{r: r, endpoint: ln.Addr().String(), actors: map[string]actor{
		"reconciler":          r,
		"reconciler-endpoint": httpActor{srv: &http.Server{Handler: r.Handler()}, ln: ln, grace: cfg.API.ShutdownGrace, limits: reconcilerLimits(rc)},
	}}, nil
}

// prefilterGauge exports whether the OWNER_NOVA pre-filter applies to
// scheduler requests now, by its configured mode, so that an alert can
// catch it off while the gate is open.
func prefilterGauge(reg prometheus.Registerer, mode string, gate interface{ OwnerNovaGateOpen() bool }) error {
	if reg == nil {
		return nil
	}
	return reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "candidates", Name: "owner_nova_prefilter_active",
		Help: "1 while allocation candidate requests of scheduler users get the OWNER_NOVA pre-filter " +
			"(mode on, or auto once the gate is open and the providers stamped), else 0.",
		ConstLabels: prometheus.Labels{"mode": mode},
	}, func() float64 {
		if mode == placementsrv.PrefilterOn || (mode == placementsrv.PrefilterAuto && gate != nil && gate.OwnerNovaGateOpen()) {
			return 1
		}
		return 0
	}))
}

// reconcilerLimits are the endpoint's: the defaults, with room for a job
// run on request to take its whole run_timeout.
func reconcilerLimits(rc config.ReconcilerConfig) httpserve.Limits {
	lim := httpserve.DefaultLimits()
	if d := rc.RunTimeout + time.Minute; d > lim.WriteTimeout {
		lim.WriteTimeout = d
	}
	return lim
}

// httpActor serves an http.Server on its listener until ctx ends.
type httpActor struct {
	srv    *http.Server
	ln     net.Listener
	grace  time.Duration
	limits httpserve.Limits
}

func (h httpActor) Run(ctx context.Context) error {
	served, shutdown := httpserve.RunLimited(ctx, h.srv, h.ln, h.grace, h.limits)
	if shutdown != nil {
		return shutdown
	}
	return served
}
