package agent

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
)

// ServiceRecord returns the agent's current record for the reconciler's
// version gate: which binary at which version runs on which host (the
// version of the nova-compute beside the agent, as configured; 0, which
// the gate treats as unknown, when it is not), and
// when it last checked in. It is POSTed to Options.ServiceURL every
// HeartbeatInterval and served by the local endpoint at GET /v1/service.
func (a *Agent) ServiceRecord() heartbeat.Record {
	return heartbeat.Record{Host: a.opts.Host, Binary: a.opts.ServiceBinary, Version: a.opts.NovaComputeVersion, UpdatedAt: time.Now().UTC()}
}

// heartbeat posts the service record when one is due. Failures are
// logged and counted, never fatal: the gate treats a silent agent as old.
func (a *Agent) heartbeat(ctx context.Context) {
	if a.opts.ServiceURL == "" || time.Since(a.lastHeartbeat) < a.opts.HeartbeatInterval {
		return
	}
	if err := a.PostServiceRecord(ctx); err != nil {
		a.metrics.serviceHeartbeat.WithLabelValues("error").Inc()
		a.log.Warn("service record not posted", zap.Error(err))
		return
	}
	a.lastHeartbeat = time.Now()
	a.metrics.serviceHeartbeat.WithLabelValues("success").Inc()
}

// PostServiceRecord sends the record to Options.ServiceURL.
func (a *Agent) PostServiceRecord(ctx context.Context) error {
	return heartbeat.Post(ctx, a.opts.ServiceURL, a.opts.ServiceToken, a.ServiceRecord())
}
