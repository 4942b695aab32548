package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// withReconciler sets the API's OWNER_NOVA pre-filter and, when the
// reconciler is enabled, builds it with its local endpoint as actors.
// Without the reconciler there is no gate, so "auto" means off.
func withReconciler(ctx context.Context, cfg config.Config, apiAddr string, log *zap.Logger, api *placementsrv.Options, replicas func(*reconciler.Options)) (map[string]actor, error) {
	rc := cfg.Reconciler
	api.SchedulerUsers = rc.SchedulerUsers
	api.OwnerNovaPrefilter = rc.OwnerNovaPrefilter
	if !rc.Enabled {
		if rc.OwnerNovaPrefilter == placementsrv.PrefilterAuto {
			api.OwnerNovaPrefilter = placementsrv.PrefilterOff
		}
		return nil, prefilterGauge(api.Registerer, api.OwnerNovaPrefilter, nil)
	}
	ro := reconciler.Options{Logger: log.Named("reconciler"), Registerer: api.Registerer}
	replicas(&ro)
	r, err := newReconciler(ctx, rc, localURL(apiAddr), ro)
	if err != nil {
		return nil, fmt.Errorf("reconciler: %w", err)
	}
	api.OwnerNovaGate = r
	if err := prefilterGauge(api.Registerer, api.OwnerNovaPrefilter, r); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", rc.Listen)
	if err != nil {
		return nil, fmt.Errorf("reconciler: listen on %s: %w", rc.Listen, err)
	}
	log.Info("reconciler endpoint", zap.String("listen", ln.Addr().String()))
	return map[string]actor{
		"reconciler":          r,
		"reconciler-endpoint": httpActor{srv: &http.Server{Handler: r.Handler()}, ln: ln, grace: cfg.API.ShutdownGrace, limits: reconcilerLimits(rc)},
	}, nil
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
