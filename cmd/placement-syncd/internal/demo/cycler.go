package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// Cycler advances the scenario and pokes the local endpoints.
type Cycler struct {
	files Files
	// AgentURL and ReconcilerURL are the local endpoints (from the
	// config; a command may point them elsewhere before Run).
	AgentURL, ReconcilerURL string
	agentToken              string
	reconcilerToken         string
	period                  time.Duration
	log                     *zap.Logger
	hc                      *http.Client
	readinessWindow         time.Duration
}

// NewCycler makes a cycler over files for the demo's configuration.
func NewCycler(cfg config.Config, files Files, period time.Duration, log *zap.Logger) *Cycler {
	return &Cycler{
		files:    files,
		AgentURL: assemble.LocalURL(cfg.Agent.Local.Listen), agentToken: cfg.Agent.Local.Token,
		ReconcilerURL: assemble.LocalURL(cfg.Reconciler.Listen), reconcilerToken: cfg.Reconciler.Token,
		period: period, log: log.Named("demo"),
		hc:              &http.Client{Timeout: cfg.Agent.FPGA.ProgramTimeout + time.Minute},
		readinessWindow: time.Minute,
	}
}

// Run waits for the agent's endpoint, then makes steps 1 to 6 one per
// period, wrapping around, until ctx ends or, with steps > 0, that many
// steps were made.
func (c *Cycler) Run(ctx context.Context, steps int) error {
	if err := c.waitReady(ctx); err != nil {
		return err
	}
	t := time.NewTicker(c.period)
	defer t.Stop()
	for n := 1; steps <= 0 || n <= steps; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := c.step(ctx, n); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.log.Warn("demo step incomplete", zap.Int("step", n), zap.Error(err))
		}
	}
	return nil
}

// Resync asks the agent for a pass now.
func (c *Cycler) Resync(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodPost, c.AgentURL+"/v1/resync", c.agentToken, nil)
	return err
}

// waitReady polls the agent's status until it answers.
func (c *Cycler) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.readinessWindow)
	defer cancel()
	for {
		if _, err := c.call(ctx, http.MethodGet, c.AgentURL+"/v1/status", c.agentToken, nil); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("demo: the agent's local endpoint %s did not answer: is `placement-syncd serve --config configs/demo.yaml` running?", c.AgentURL)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// step makes the cycle's nth step (from 1), the scenario's step
// (n-1)%6+1: rewrite the sources, ask for a pass and a run, and program
// the FPGA if the step says so.
func (c *Cycler) step(ctx context.Context, n int) error {
	steps := Steps()
	i := (n - 1) % len(steps)
	s := steps[i]
	c.log.Info(fmt.Sprintf("demo step %d/%d: %s", i+1, len(steps), s.Note))
	if err := c.files.Write(s); err != nil {
		return err
	}
	var errs []error
	if err := c.Resync(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := c.runAggregates(ctx); err != nil {
		errs = append(errs, err)
	}
	if s.Program != "" {
		body, _ := json.Marshal(map[string]any{"device": FPGADevice, "image": s.Program})
		out, err := c.call(ctx, http.MethodPost, c.AgentURL+"/v1/fpga/program", c.agentToken, body)
		if err != nil {
			errs = append(errs, err)
		} else {
			c.log.Info("demo: FPGA programmed", zap.String("device", FPGADevice), zap.String("answer", strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

// runAggregates asks for an aggregates run, waiting out a run already in
// progress (409) for a few seconds.
func (c *Cycler) runAggregates(ctx context.Context) error {
	url := c.ReconcilerURL + "/v1/jobs/aggregates/run"
	var err error
	for range 20 {
		if _, err = c.call(ctx, http.MethodPost, url, c.reconcilerToken, nil); !errors.Is(err, errBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return err
}

// errBusy is a 409: the reconciler is already running the job.
var errBusy = errors.New("busy (409)")

func (c *Cycler) call(ctx context.Context, method, url, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusConflict:
		return out, fmt.Errorf("%s %s: %w: %s", method, url, errBusy, out)
	case resp.StatusCode/100 != 2:
		return out, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}
