package assemble

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
)

// NovaSettings maps reconciler.nova onto what Nova's clients are opened
// from (novaclient.Open, OpenComputes).
func NovaSettings(c config.NovaConfig) novaclient.Settings {
	s := novaclient.Settings{File: c.File, Endpoint: c.Endpoint, Token: c.Token, Cloud: c.Cloud, CloudsFile: c.CloudsFile, Timeout: c.Timeout,
		APIDatabase: c.APIDatabase, CellTimeout: c.CellTimeout, CellDatabasesComplete: c.CellDatabasesComplete}
	for _, cdb := range c.CellDatabases {
		s.CellDatabases = append(s.CellDatabases, novaclient.CellDatabase{Name: cdb.Name, DSN: cdb.DSN})
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
// state file, jobs (each with its options from its section) and gate,
// under lead.
func ReconcilerOptions(ctx context.Context, c config.ReconcilerConfig, apiURL string, lead Leadership, log *zap.Logger, reg prometheus.Registerer) (reconciler.Options, error) {
	opts := reconciler.Options{Logger: log, Registerer: reg, Leader: lead.Leader, Replica: lead.Replica, Shared: lead.Shared}
	pc, err := ReconcilerPlacementClient(ctx, c.Placement, apiURL)
	if err != nil {
		return opts, err
	}
	settings := NovaSettings(c.Nova)
	nova, err := novaclient.Open(ctx, settings)
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
		opts.Computes = novaclient.ComputesFrom(settings, nova)
		if nova == nil && c.Nova.APIDatabase == "" && log != nil {
			log.Warn("reconciler.nova.cell_databases without api_database or a Nova API: a cell missing from it cannot be noticed; set reconciler.nova.api_database")
		}
	}
	limit, err := removallimit.Parse(c.Aggregates.MaxRemovals)
	if err != nil {
		return opts, config.Error{Err: fmt.Errorf("reconciler.aggregates.max_removals: %w", err)}
	}
	opts.MaxRemovals = &limit
	env := reconciler.JobEnv{Nova: nova, Settings: settings, Placement: pc.ServiceClient()}
	if opts.JobOptions, err = reconciler.OpenJobOptions(jobs, c.JobSections(), env); err != nil {
		return opts, config.Error{Err: err}
	}
	retry := reconciler.DefaultRetry()
	retry.Attempts = c.RetryAttempts
	opts.Placement, opts.Nova, opts.State, opts.Jobs = reconciler.FromClient(pc), nova, state, jobs
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

// AuditOptions are the audit command's options, opened from
// reconciler.audit as the audit job opens them.
func AuditOptions(ctx context.Context, c config.ReconcilerConfig, nova novaclient.Source, apiURL string) (*reconciler.AuditOptions, error) {
	o, err := reconciler.OpenAudit(c.Audit, reconciler.JobEnv{Nova: nova, Settings: NovaSettings(c.Nova)})
	if err != nil {
		return nil, config.Error{Err: err}
	}
	pc, err := ReconcilerPlacementClient(ctx, c.Placement, apiURL)
	if err != nil {
		return nil, err
	}
	o.Placement = audit.NewPlacement(pc.ServiceClient())
	return o, nil
}

// Leadership is how the reconciler shares its work with other replicas:
// whether this one is the leader (nil: always), its name, and the
// heartbeats shared through the database (nil: kept in this process).
type Leadership struct {
	Leader  func() bool
	Replica string
	Shared  reconciler.SharedRecords
}
