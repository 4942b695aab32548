package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// withReconciler sets the API's OWNER_NOVA pre-filter and, when the
// reconciler is enabled, builds it with its local endpoint as actors.
// Without the reconciler there is no gate, so "auto" means off.
func withReconciler(ctx context.Context, cfg Config, apiAddr string, log *zap.Logger, api *placementsrv.Options, replicas func(*reconciler.Options)) (map[string]actor, error) {
	rc := cfg.Reconciler
	api.SchedulerUsers = rc.SchedulerUsers
	api.OwnerNovaPrefilter = rc.OwnerNovaPrefilter
	if !rc.Enabled {
		if rc.OwnerNovaPrefilter == placementsrv.PrefilterAuto {
			api.OwnerNovaPrefilter = placementsrv.PrefilterOff
		}
		return nil, nil
	}
	ro := reconciler.Options{Logger: log.Named("reconciler"), Registerer: api.Registerer}
	replicas(&ro)
	r, err := newReconciler(ctx, rc, localURL(apiAddr), ro)
	if err != nil {
		return nil, fmt.Errorf("reconciler: %w", err)
	}
	api.OwnerNovaGate = r
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

// reconcilerLimits are the endpoint's: the defaults, with room for a job
// run on request to take its whole run_timeout.
func reconcilerLimits(rc ReconcilerConfig) httpserve.Limits {
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
