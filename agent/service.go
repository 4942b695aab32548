package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// ServiceRecord is what the agent reports about itself for the
// reconciler's version gate: which binary at which version runs on which
// host, and when it last checked in. It is POSTed as JSON to
// Options.ServiceURL every HeartbeatInterval and served by the local
// endpoint at GET /v1/service.
//
// The shape is the reconciler's POST /v1/services body (issue 7), which
// decodes strictly: host, binary, version (an integer service version, as
// Nova's services table has) and updated_at.
type ServiceRecord struct {
	Host      string    `json:"host"`
	Binary    string    `json:"binary"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ServiceVersion is this agent's service version in Nova's numbering:
// 73 is the nova-compute version that reports OWNER_NOVA on the providers
// it creates (nova/objects/service.py), which this agent does too.
const ServiceVersion = 73

// heartbeat holds when the record was last posted.
type heartbeat struct {
	last time.Time
}

// ServiceRecord returns the agent's current record.
func (a *Agent) ServiceRecord() ServiceRecord {
	return ServiceRecord{Host: a.opts.Host, Binary: a.opts.ServiceBinary, Version: ServiceVersion, UpdatedAt: time.Now().UTC()}
}

// heartbeat posts the service record when one is due. Failures are
// logged and counted, never fatal: the gate treats a silent agent as old.
func (a *Agent) heartbeat(ctx context.Context) {
	if a.opts.ServiceURL == "" || time.Since(a.hb.last) < a.opts.HeartbeatInterval {
		return
	}
	if err := a.PostServiceRecord(ctx); err != nil {
		a.metrics.serviceHeartbeat.WithLabelValues("error").Inc()
		a.log.Warn("service record not posted", zap.Error(err))
		return
	}
	a.hb.last = time.Now()
	a.metrics.serviceHeartbeat.WithLabelValues("success").Inc()
}

// PostServiceRecord sends the record to Options.ServiceURL.
func (a *Agent) PostServiceRecord(ctx context.Context) error {
	body, err := json.Marshal(a.ServiceRecord())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.ServiceURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("service record: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.opts.ServiceToken != "" {
		req.Header.Set("X-Auth-Token", a.opts.ServiceToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("service record: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("service record: %s answered %d", a.opts.ServiceURL, resp.StatusCode)
	}
	return nil
}
