// Package source keeps what capacity by flavor reads from Nova: its
// flavors, translated into the requests Nova's scheduler sends
// (flavorreq), and its aggregates' zones and tenants. A Source reads them
// every interval and keeps the last good set, so that a scrape or a
// request counts from memory (capacity/count) and never waits for Nova.
package source

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/capacity/flavorreq"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Nova is what a Source reads: aggregates (State) and flavors.
type Nova interface {
	State(ctx context.Context) (novaclient.State, error)
	novaclient.FlavorLister
}

// Options configure a Source.
type Options struct {
	Nova Nova
	// Refresh is the time between two reads of Nova.
	Refresh time.Duration
	// DefaultZone is Nova's default_availability_zone.
	DefaultZone string
	// OwnerNova reports whether the OWNER_NOVA pre-filter applies to the
	// scheduler's requests now; nil: never.
	OwnerNova func() bool
	// HeldBack gives the agent's reasons by provider uuid, when the agent
	// runs in this process; nil: every held-back provider is "reserved".
	HeldBack func() map[string]string
	Log      *zap.Logger
}

// Source is the last good read of Nova, refreshed by Run.
type Source struct {
	opts Options

	mu sync.Mutex
	// translated holds the flavors' translations without and with the
	// OWNER_NOVA pre-filter, so that a change of the gate needs no read.
	translated [2][]flavorreq.Result
	aggregates map[string]count.Aggregate
	loaded     bool

	failures prometheus.Counter
	lastOK   prometheus.Gauge
	flavors  prometheus.Gauge
	set      *metrics.Set
}

// New builds a Source; nothing is read until Refresh or Run.
func New(opts Options) *Source {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	set := metrics.NewSet("capacity")
	return &Source{
		opts: opts, set: set,
		failures: set.Counter("refresh_failures_total",
			"Reads of Nova's flavors and aggregates for capacity by flavor that failed; the last good set stays in use."),
		lastOK: set.Gauge("last_refresh_timestamp_seconds",
			"When Nova's flavors and aggregates were last read for capacity by flavor (Unix time; 0: never)."),
		flavors: set.Gauge("flavors", "Nova flavors capacity by flavor counts, from the last good read."),
	}
}

// Register registers the Source's own metrics.
func (s *Source) Register(reg prometheus.Registerer) error {
	return s.set.Register(reg)
}

// Run refreshes at once, then every Refresh, until ctx ends. A failed
// read is logged and counted, never fatal.
func (s *Source) Run(ctx context.Context) error {
	t := time.NewTicker(s.opts.Refresh)
	defer t.Stop()
	for {
		if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
			s.opts.Log.Warn("capacity: cannot read Nova's flavors and aggregates; keeping the last good set", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Refresh reads Nova once; on failure the last good set stays.
func (s *Source) Refresh(ctx context.Context) error {
	flavors, err := s.opts.Nova.Flavors(ctx)
	if err != nil {
		s.failures.Inc()
		return fmt.Errorf("capacity: read flavors: %w", err)
	}
	st, err := s.opts.Nova.State(ctx)
	if err != nil {
		s.failures.Inc()
		return fmt.Errorf("capacity: read aggregates: %w", err)
	}
	plain := flavorreq.TranslateAll(flavors, flavorreq.Options{})
	owner := flavorreq.TranslateAll(flavors, flavorreq.Options{OwnerNova: true})
	aggs := Aggregates(st.Aggregates)
	s.mu.Lock()
	s.translated = [2][]flavorreq.Result{plain, owner}
	s.aggregates, s.loaded = aggs, true
	s.mu.Unlock()
	s.lastOK.SetToCurrentTime()
	s.flavors.Set(float64(len(flavors)))
	return nil
}

// Aggregates reads Nova's aggregates' metadata as count needs it: the
// zone (availability_zone) and the tenants (filter_tenant_id*, sorted).
func Aggregates(in []novaclient.Aggregate) map[string]count.Aggregate {
	out := make(map[string]count.Aggregate, len(in))
	for _, a := range in {
		ca := count.Aggregate{Name: a.Name, Zone: a.Metadata["availability_zone"]}
		for k, v := range a.Metadata {
			if strings.HasPrefix(k, "filter_tenant_id") && v != "" {
				ca.Projects = append(ca.Projects, v)
			}
		}
		slices.Sort(ca.Projects)
		out[a.UUID] = ca
	}
	return out
}

// Input is what count reads for snap: the last good flavors, translated
// as the scheduler's requests are now, and aggregates; false before the
// first good read.
func (s *Source) Input(snap *readmodel.Snapshot) (count.Input, bool) {
	owner := 0
	if s.opts.OwnerNova != nil && s.opts.OwnerNova() {
		owner = 1
	}
	s.mu.Lock()
	flavors, aggs, ok := s.translated[owner], s.aggregates, s.loaded
	s.mu.Unlock()
	if !ok {
		return count.Input{}, false
	}
	in := count.Input{Snapshot: snap, Flavors: flavors, Aggregates: aggs, DefaultZone: s.opts.DefaultZone}
	if s.opts.HeldBack != nil {
		in.HeldBack = s.opts.HeldBack()
	}
	return in, true
}
