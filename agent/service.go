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
type ServiceRecord struct {
	Host      string    `json:"host"`
	Binary    string    `json:"binary"`
	Version   string    `json:"version"`
	Drivers   []string  `json:"drivers"`
	UpdatedAt time.Time `json:"updated_at"`
	// LastSuccess is the end of the last fully successful pass (zero:
	// none yet).
	LastSuccess time.Time `json:"last_success,omitzero"`
}

// heartbeat holds when the record was last posted.
type heartbeat struct {
	last time.Time
}

// ServiceRecord returns the agent's current record.
func (a *Agent) ServiceRecord() ServiceRecord {
	names := make([]string, len(a.opts.Drivers))
	for i, d := range a.opts.Drivers {
		names[i] = d.Name()
	}
	_, lastOK := a.LastResults()
	return ServiceRecord{
		Host: a.opts.Host, Binary: DefaultServiceBinary, Version: a.opts.Version,
		Drivers: names, UpdatedAt: time.Now().UTC(), LastSuccess: lastOK.UTC(),
	}
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
