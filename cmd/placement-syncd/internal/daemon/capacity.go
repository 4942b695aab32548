package daemon

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/capacity/source"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// capacity is capacity by flavor in this process: the Source the API's
// route asks and the refresher actor; zero when capacity.enabled is off.
type capacity struct {
	src   *source.Source
	agent atomic.Pointer[agent.Agent] // the in-process agent, once built
}

// startCapacity builds capacity by flavor when enabled: the Source over
// reconciler.nova, its metrics and the scrape-time collector registered
// in reg, and its refresher in actors. The pre-filter follows mode and
// gate as the API's does.
func startCapacity(ctx context.Context, cfg config.Config, st store.SnapshotStore, gate placementsrv.OwnerNovaGate,
	actors map[string]actor, log *zap.Logger, reg prometheus.Registerer) (*capacity, error) {
	c := &capacity{}
	cc := cfg.Capacity
	if !cc.Enabled {
		return c, nil
	}
	opened, err := novaclient.Open(ctx, assemble.NovaSettings(cfg.Reconciler.Nova))
	if err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	nova, ok := opened.(source.Nova)
	if !ok {
		return nil, fmt.Errorf("capacity: reconciler.nova gives no flavors (set its file, endpoint or cloud)")
	}
	mode := cfg.Reconciler.OwnerNovaPrefilter
	c.src = source.New(source.Options{
		Nova: nova, Refresh: cc.Refresh, DefaultZone: cc.DefaultZone, Log: log.Named("capacity"),
		OwnerNova: func() bool {
			return mode == placementsrv.PrefilterOn || (mode == placementsrv.PrefilterAuto && gate != nil && gate.OwnerNovaGateOpen())
		},
		HeldBack: c.heldBack,
	})
	if reg != nil {
		if err := c.src.Register(reg); err != nil {
			return nil, fmt.Errorf("capacity: %w", err)
		}
		col := source.NewCollector(st, c.src, source.CollectorOptions{PerHost: cc.PerHost, OSCapacity: cc.OSCapacityMetrics}, log.Named("capacity"))
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("capacity: %w", err)
		}
	}
	actors["capacity"] = c.src
	return c, nil
}

// reporter is what the API's capacity route asks; nil when off.
func (c *capacity) reporter() placementsrv.CapacityReporter {
	if c.src == nil {
		return nil
	}
	return c.src
}

// withAgent records the in-process agent among actors, whose last pass
// names the providers it holds back.
func (c *capacity) withAgent(actors map[string]actor) {
	if a, ok := actors["agent"].(agentActor); ok {
		c.agent.Store(a.a)
	}
}

// heldBack is the in-process agent's last pass's reasons by provider;
// nil without an agent here (every held-back provider is "reserved").
func (c *capacity) heldBack() map[string]string {
	a := c.agent.Load()
	if a == nil {
		return nil
	}
	results, _ := a.LastResults()
	out := map[string]string{}
	for _, r := range results {
		for u, reason := range r.HeldBack {
			out[u] = reason
		}
	}
	return out
}
