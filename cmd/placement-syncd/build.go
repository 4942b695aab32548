package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/keystone"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// novaSource builds the configured Nova source; nil when none is set.
func novaSource(ctx context.Context, c config.NovaConfig) (reconciler.NovaSource, error) {
	switch {
	case c.File != "":
		return reconciler.NovaFile{Path: c.File}, nil
	case c.Endpoint != "":
		pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: c.Timeout}}
		pc.SetToken(c.Token)
		return reconciler.NewNovaAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(c.Endpoint), Type: "compute"}), nil
	case c.Cloud != "":
		// The usual clouds.yaml places; the entry's TLS settings apply.
		entry, err := cloudsyaml.Read(cloudsyaml.Source{Cloud: c.Cloud})
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		hc, err := entry.HTTPClient(nil)
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		sc, err := entry.ServiceClient(ctx, hc, "compute")
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		return reconciler.NewNovaAPI(sc), nil
	}
	return nil, nil
}

// computeSource is where the gate reads Nova's computes: the cell
// databases when configured, else the Nova source (os-services or the
// file's services); nil when there is none.
func computeSource(ctx context.Context, c config.ReconcilerConfig) (reconciler.ComputeSource, error) {
	nova, err := novaSource(ctx, c.Nova)
	if err != nil {
		return nil, err
	}
	return computesFrom(c.Nova, novaWithTimeout(nova, c.Nova)), nil
}

// computesFrom is computeSource over an already built Nova source. With
// cell databases but no API database, Nova's own list (os-services) is
// what tells a cell missing from the configuration.
func computesFrom(c config.NovaConfig, nova reconciler.NovaSource) reconciler.ComputeSource {
	listed, _ := nova.(reconciler.ComputeSource)
	if len(c.CellDatabases) == 0 && c.APIDatabase == "" {
		return listed
	}
	cells := reconciler.CellDatabases{APIDatabase: c.APIDatabase, Nova: listed, QueryTimeout: c.CellTimeout}
	for _, cdb := range c.CellDatabases {
		cells.Cells = append(cells.Cells, reconciler.CellDatabase{Name: cdb.Name, DSN: cdb.DSN})
	}
	return cells
}

// novaWithTimeout applies reconciler.nova.timeout to a compute API source
// however it was built (endpoint or clouds.yaml).
func novaWithTimeout(nova reconciler.NovaSource, c config.NovaConfig) reconciler.NovaSource {
	if api, ok := nova.(*reconciler.NovaAPI); ok {
		api.Timeout = c.Timeout
	}
	return nova
}

// configuredServices are the operator's records from gate.services.
func configuredServices(c config.ReconcilerConfig) []reconciler.ServiceRecord {
	var out []reconciler.ServiceRecord
	for _, s := range c.Gate.Services {
		out = append(out, reconciler.ServiceRecord{Host: s.Host, Binary: s.Binary, Version: s.Version, Deleted: s.Deleted, ForcedDown: s.ForcedDown})
	}
	return out
}

// reconcilerPlacement builds the Placement client; localURL is used
// when no URL is configured.
func reconcilerPlacement(ctx context.Context, c config.ReconcilerPlacement, localURL string) (reconciler.Placement, error) {
	pc, err := reconcilerPlacementClient(ctx, c, localURL)
	if err != nil {
		return nil, err
	}
	return reconciler.FromClient(pc), nil
}

// reconcilerPlacementClient is the client of the reconciler's Placement
// (its jobs and the audit): its URL and token, or a clouds.yaml entry
// (the URL then overriding the catalog's); this process's API when
// neither is set.
func reconcilerPlacementClient(ctx context.Context, c config.ReconcilerPlacement, localURL string) (*placementclient.Client, error) {
	opts := placementclient.Options{Endpoint: c.URL, Token: c.Token}
	if opts.Endpoint == "" && c.Cloud == "" {
		opts.Endpoint = localURL
	}
	if c.Cloud != "" {
		opts.Keystone = &placementclient.KeystoneOptions{Cloud: c.Cloud}
	}
	return placementclient.New(ctx, opts)
}

// reconcilerOptions are the reconciler's options: its Placement (this
// process's API at localURL unless configured), Nova and cell sources,
// state file, jobs and gate, under lead.
func reconcilerOptions(ctx context.Context, c config.ReconcilerConfig, localURL string, lead leadership, log *zap.Logger, reg prometheus.Registerer) (reconciler.Options, error) {
	opts := reconciler.Options{Logger: log, Registerer: reg, Leader: lead.leader, Replica: lead.replica, Shared: lead.shared}
	pl, err := reconcilerPlacement(ctx, c.Placement, localURL)
	if err != nil {
		return opts, err
	}
	nova, err := novaSource(ctx, c.Nova)
	if err != nil {
		return opts, err
	}
	nova = novaWithTimeout(nova, c.Nova)
	state, err := reconciler.OpenStateFile(c.StateFile)
	if err != nil {
		return opts, err
	}
	jobs := map[string]string{}
	if c.Jobs.Aggregates != "" && nova != nil {
		jobs[reconciler.JobAggregates] = c.Jobs.Aggregates
	}
	if c.Jobs.OwnerTraits != "" {
		jobs[reconciler.JobOwnerTraits] = c.Jobs.OwnerTraits
	}
	services := configuredServices(c)
	if len(c.Nova.CellDatabases) > 0 || c.Nova.APIDatabase != "" {
		opts.Computes = computesFrom(c.Nova, nova)
		if _, lists := nova.(reconciler.ComputeSource); !lists && c.Nova.APIDatabase == "" && log != nil {
			log.Warn("reconciler.nova.cell_databases without api_database or a Nova API: a cell missing from it cannot be noticed; set reconciler.nova.api_database")
		}
	}
	limit, err := removallimit.Parse(c.Aggregates.MaxRemovals)
	if err != nil {
		return opts, fmt.Errorf("reconciler.aggregates.max_removals: %w", err)
	}
	opts.MaxRemovals = &limit
	if c.Jobs.Audit != "" {
		if opts.Audit, err = auditOptions(ctx, c, nova, localURL); err != nil {
			return opts, err
		}
		jobs[reconciler.JobAudit] = c.Jobs.Audit
	}
	retry := reconciler.DefaultRetry
	retry.Attempts = c.RetryAttempts
	opts.Placement, opts.Nova, opts.State, opts.Jobs = pl, nova, state, jobs
	opts.RunTimeout, opts.Concurrency, opts.Retry, opts.Token = c.RunTimeout, c.Concurrency, retry, c.Token
	opts.GateRequired, opts.GateOverride, opts.Services = c.Gate.MinVersion, c.Gate.Override, services
	opts.MaxStaleness = c.Gate.MaxStaleness
	return opts, nil
}

// newReconciler is the reconciler of a command (no leadership: it runs
// alone).
func newReconciler(ctx context.Context, c config.ReconcilerConfig, localURL string, log *zap.Logger, reg prometheus.Registerer) (*reconciler.Reconciler, error) {
	opts, err := reconcilerOptions(ctx, c, localURL, leadership{}, log, reg)
	if err != nil {
		return nil, err
	}
	return reconciler.New(opts)
}

// localURL is the URL of this process's API for a listen address.
func localURL(listen string) string {
	return "http://" + listen
}

// apiAuth is the API's policy and token validation, built before the
// store opens so that a bad policy file or Keystone section stops
// start-up before anything is touched.
type apiAuth struct {
	policy          *policy.Enforcer
	tokens          placementsrv.TokenValidator
	wwwAuthenticate string
}

// newAPIAuth reads and compiles the policy file and, under keystone,
// builds the token validator.
func newAPIAuth(cfg config.Config) (apiAuth, error) {
	enf, err := newEnforcer(cfg.Policy, cfg.API.ReleaseValue())
	if err != nil {
		return apiAuth{}, err
	}
	if cfg.API.AuthStrategy != "keystone" {
		return apiAuth{policy: enf}, nil
	}
	k := cfg.KeystoneAuthToken
	tokens, err := keystone.New(keystone.Options{
		AuthURL: k.AuthURL, Username: k.Username, Password: k.Password,
		ProjectName: k.ProjectName, UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName,
		Timeout: k.Timeout, CacheSize: cacheSize(k.CacheSize), CacheTTL: k.CacheTTL,
	})
	if err != nil {
		return apiAuth{}, err
	}
	www := k.WWWAuthenticateURI
	if www == "" {
		www = k.AuthURL
	}
	return apiAuth{policy: enf, tokens: tokens, wwwAuthenticate: www}, nil
}

// apiOptions are the API server's options over its store, auth and
// metrics handler, with the OWNER_NOVA pre-filter following gate (nil
// when the reconciler does not run here: "auto" then means off).
func apiOptions(cfg config.Config, st store.Store, auth apiAuth, gate placementsrv.OwnerNovaGate, metricsHandler http.Handler, log *zap.Logger, reg prometheus.Registerer) placementsrv.Options {
	ac := cfg.API.AllocationCandidates
	opts := placementsrv.Options{
		Store:              st,
		Logger:             log.Named("api"),
		Auth:               cfg.API.AuthStrategy,
		Policy:             auth.policy,
		Tokens:             auth.tokens,
		WWWAuthenticateURI: auth.wwwAuthenticate,
		Release:            cfg.API.ReleaseValue(),
		MaxMicroversion:    cfg.API.MaxMicroversionValue(),

		RandomizeAllocationCandidates: ac.Randomize,
		MaxAllocationCandidates:       ac.Cap(),
		AllocationCandidatesOrder:     ac.Order,
		OptimizeForWideProviderTrees:  ac.OptimizeForWideProviderTrees,

		Registerer:           reg,
		MetricsHandler:       metricsHandler,
		OmitOpenStackMetrics: !cfg.Metrics.OpenStackCompat,
		Limits:               apiLimits(cfg.API),
		MaxStaleness:         cfg.Database.ChangeFeed.MaxStaleness,

		SchedulerUsers:     cfg.Reconciler.SchedulerUsers,
		OwnerNovaPrefilter: cfg.Reconciler.OwnerNovaPrefilter,
		OwnerNovaGate:      gate,
	}
	if gate == nil && opts.OwnerNovaPrefilter == placementsrv.PrefilterAuto {
		opts.OwnerNovaPrefilter = placementsrv.PrefilterOff
	}
	if len(cfg.CORS.AllowedOrigin) > 0 {
		opts.CORS = &placementsrv.CORSOptions{
			AllowedOrigins:   cfg.CORS.AllowedOrigin,
			AllowCredentials: cfg.CORS.AllowCredentials,
			ExposeHeaders:    cfg.CORS.ExposeHeaders,
			MaxAge:           cfg.CORS.MaxAge,
			AllowMethods:     cfg.CORS.AllowMethods,
			AllowHeaders:     cfg.CORS.AllowHeaders,
		}
	}
	return opts
}

// cacheSize maps the config's 0 (no cache) to the client's "disabled".
func cacheSize(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func newEnforcer(p config.PolicyConfig, r release.Release) (*policy.Enforcer, error) {
	scope, newDefaults := p.Enforcement(r)
	enf, err := policy.New(policy.Options{File: p.File, EnforceScope: scope, EnforceNewDefaults: newDefaults, Release: r})
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return enf, nil
}

// logExposure logs, at every start, what validateSafety lets through but
// an operator should know.
func logExposure(c config.Config, log *zap.Logger) {
	if c.API.AuthStrategy == "noauth2" && !config.IsLoopback(c.API.Listen) {
		log.Warn("INSECURE: the Placement API listens beyond loopback with noauth2: any client can act as admin (api.allow_insecure_noauth is true)",
			zap.String("listen", c.API.Listen))
	}
	if c.Reconciler.Enabled && c.Reconciler.Token == "" {
		log.Info("reconciler endpoint on loopback without a token: any process on this host may post heartbeats and run jobs; set reconciler.token to require one",
			zap.String("listen", c.Reconciler.Listen))
	}
}
