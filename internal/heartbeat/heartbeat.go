// Package heartbeat is the service record an agent reports about itself
// and the reconciler's version gate decides from: its JSON shape (the
// body of the reconciler's POST /v1/services), its checks, and the POST
// that carries it.
package heartbeat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ComputeBinary is the service binary the version gate counts; an agent
// reports for its host as nova-compute does.
const ComputeBinary = "nova-compute"

// OwnerTraitVersion is the nova-compute service version that reports
// OWNER_NOVA on the providers it creates (nova/objects/service.py,
// version 73, Nova 34.0.0): what the agent reports, since it does the
// same, and what the gate requires of every compute by default.
const OwnerTraitVersion = 73

// Record is one service: which binary at which version runs on which
// host, and when it last checked in. An operator may also set records in
// the reconciler's configuration.
type Record struct {
	Host   string `json:"host"`
	Binary string `json:"binary"`
	// Version is an integer service version, as Nova's services table
	// has.
	Version int `json:"version"`
	// Deleted and ForcedDown exclude the record from the gate, as Nova's
	// minimum-version query does.
	Deleted    bool `json:"deleted,omitempty"`
	ForcedDown bool `json:"forced_down,omitempty"`
	// UpdatedAt is when the record last arrived; an operator's record
	// for a host that never sent one has none, and leaves it out.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Authenticated is set by the receiver, never taken from the body:
	// the record arrived with the endpoint's token (or was configured by
	// the operator). Only such records give the gate a version.
	Authenticated bool `json:"authenticated,omitempty"`
}

// Validate checks a record received from the network.
func (r Record) Validate() error {
	switch {
	case r.Host == "":
		return errors.New("host is required")
	case r.Binary == "":
		return errors.New("binary is required")
	case r.Version < 0:
		return errors.New("version must not be negative")
	}
	return nil
}

// postTimeout bounds one POST: a slow reconciler must not hold up the
// agent's next pass.
const postTimeout = 10 * time.Second

// Post sends rec as JSON to url, with token as X-Auth-Token when set.
func Post(ctx context.Context, url, token string, rec Record) error {
	body, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("service record: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("service record: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("service record: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("service record: %s answered %d", url, resp.StatusCode)
	}
	return nil
}
