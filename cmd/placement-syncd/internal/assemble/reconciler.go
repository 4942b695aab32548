package assemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// NovaSettings maps reconciler.nova onto what the reconciler builds its
// Nova clients from (reconciler.OpenNova, OpenComputes).
func NovaSettings(c config.NovaConfig) reconciler.NovaSettings {
	s := reconciler.NovaSettings{File: c.File, Endpoint: c.Endpoint, Token: c.Token, Cloud: c.Cloud, CloudsFile: c.CloudsFile, Timeout: c.Timeout,
		APIDatabase: c.APIDatabase, CellTimeout: c.CellTimeout}
	for _, cdb := range c.CellDatabases {
		s.CellDatabases = append(s.CellDatabases, reconciler.CellDatabase{Name: cdb.Name, DSN: cdb.DSN})
	}
	return s
}

// ConfiguredServices are the operator's records from gate.services.
func ConfiguredServices(c config.ReconcilerConfig) []reconciler.ServiceRecord {
	var out []reconciler.ServiceRecord
	for _, s := range c.Gate.Services {
		out = append(out, reconciler.ServiceRecord{Host: s.Host, Binary: s.Binary, Version: s.Version, Deleted: s.Deleted, ForcedDown: s.ForcedDown})
	}
	return out
}

// reconcilerPlacement builds the Placement client; apiURL is used
// when no URL is configured.
func reconcilerPlacement(ctx context.Context, c config.ReconcilerPlacement, apiURL string) (reconciler.Placement, error) {
	pc, err := ReconcilerPlacementClient(ctx, c, apiURL)
	if err != nil {
		return nil, err
	}
	return reconciler.FromClient(pc), nil
}

// ReconcilerPlacementClient is the client of the reconciler's Placement
// (its jobs and the audit): its URL and token, or a clouds.yaml entry
// (the URL then overriding the catalog's); this process's API when
// neither is set.
func ReconcilerPlacementClient(ctx context.Context, c config.ReconcilerPlacement, apiURL string) (*placementclient.Client, error) {
	opts := placementclient.Options{Endpoint: c.URL, Token: c.Token}
	if opts.Endpoint == "" && c.Cloud == "" {
		opts.Endpoint = apiURL
	}
	if c.Cloud != "" {
		opts.Keystone = &placementclient.KeystoneOptions{Cloud: c.Cloud}
	}
	return placementclient.New(ctx, opts)
}

// ReconcilerOptions are the reconciler's options: its Placement (this
// process's API at apiURL unless configured), Nova and cell sources,
// state file, jobs and gate, under lead.
func ReconcilerOptions(ctx context.Context, c config.ReconcilerConfig, apiURL string, lead Leadership, log *zap.Logger, reg prometheus.Registerer) (reconciler.Options, error) {
	opts := reconciler.Options{Logger: log, Registerer: reg, Leader: lead.Leader, Replica: lead.Replica, Shared: lead.Shared}
	pl, err := reconcilerPlacement(ctx, c.Placement, apiURL)
	if err != nil {
		return opts, err
	}
	settings := NovaSettings(c.Nova)
	nova, err := reconciler.OpenNova(ctx, settings)
	if err != nil {
		return opts, err
	}
	state, err := reconciler.OpenStateFile(c.StateFile)
	if err != nil {
		return opts, err
	}
	// The reconciler leaves out a job whose source is missing.
	jobs := map[string]string{}
	for name, spec := range c.Jobs {
		if spec != "" {
			jobs[name] = spec
		}
	}
	services := ConfiguredServices(c)
	if _, ok := settings.Cells(); ok {
		opts.Computes = reconciler.ComputesFrom(settings, nova)
		if _, lists := nova.(reconciler.ComputeSource); !lists && c.Nova.APIDatabase == "" && log != nil {
			log.Warn("reconciler.nova.cell_databases without api_database or a Nova API: a cell missing from it cannot be noticed; set reconciler.nova.api_database")
		}
	}
	limit, err := removallimit.Parse(c.Aggregates.MaxRemovals)
	if err != nil {
		return opts, config.Error{Err: fmt.Errorf("reconciler.aggregates.max_removals: %w", err)}
	}
	opts.MaxRemovals = &limit
	if jobs[reconciler.JobAudit] != "" {
		if opts.Audit, err = AuditOptions(ctx, c, nova, apiURL); err != nil {
			return opts, err
		}
	}
	retry := reconciler.DefaultRetry()
	retry.Attempts = c.RetryAttempts
	opts.Placement, opts.Nova, opts.State, opts.Jobs = pl, nova, state, jobs
	opts.RunTimeout, opts.Concurrency, opts.Retry, opts.Token = c.RunTimeout, c.Concurrency, retry, c.Token
	opts.GateRequired, opts.GateOverride, opts.Services = c.Gate.MinVersion, c.Gate.Override, services
	opts.MaxStaleness = c.Gate.MaxStaleness
	return opts, nil
}

// NewReconciler is the reconciler of a command (no Leadership: it runs
// alone).
func NewReconciler(ctx context.Context, c config.ReconcilerConfig, apiURL string, log *zap.Logger, reg prometheus.Registerer) (*reconciler.Reconciler, error) {
	opts, err := ReconcilerOptions(ctx, c, apiURL, Leadership{}, log, reg)
	if err != nil {
		return nil, err
	}
	return reconciler.New(opts)
}

// apiURL is the URL of this process's API for a listen address.
func LocalURL(listen string) string {
	return "http://" + listen
}

// AuditOptions builds the audit's sources from the reconciler's config:
// the compute API or the file of its answers when nova is one, the cell
// databases when configured.
func AuditOptions(ctx context.Context, c config.ReconcilerConfig, nova reconciler.NovaSource, apiURL string) (*reconciler.AuditOptions, error) {
	var sources []reconciler.AuditNova
	switch n := nova.(type) {
	case *reconciler.NovaAPI:
		sources = append(sources, n)
	case reconciler.NovaFile:
		sources = append(sources, n)
	}
	if cells, ok := NovaSettings(c.Nova).Cells(); ok {
		sources = append(sources, cells)
	}
	if len(sources) == 0 {
		return nil, config.Error{Err: errors.New("audit: no source of Nova's instances: set reconciler.nova.endpoint or cloud (the compute API, admin), reconciler.nova.file, or reconciler.nova.api_database or cell_databases")}
	}
	limit, err := removallimit.Parse(c.Audit.MaxRemovals)
	if err != nil {
		return nil, config.Error{Err: fmt.Errorf("reconciler.audit.max_removals: %w", err)}
	}
	pc, err := ReconcilerPlacementClient(ctx, c.Placement, apiURL)
	if err != nil {
		return nil, err
	}
	return &reconciler.AuditOptions{Placement: reconciler.NewAuditPlacement(pc.ServiceClient()), Nova: sources, Grace: c.Audit.Grace,
		Delete: c.Audit.Delete, MaxRemovals: limit}, nil
}

// Leadership is how the reconciler shares its work with other replicas:
// whether this one is the leader (nil: always), its name, and the
// heartbeats shared through the database (nil: kept in this process).
type Leadership struct {
	Leader  func() bool
	Replica string
	Shared  reconciler.SharedRecords
}
