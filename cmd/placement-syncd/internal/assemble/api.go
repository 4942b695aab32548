// Package assemble builds each of placement-syncd's components from its
// section of the configuration: one function a component, returning its
// options (or the component itself), so that a newcomer finds in one
// place every value a component is given. The clients of other services
// are built by the packages that use them; assemble only maps the
// configuration onto their settings.
package assemble

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/keystone"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// APIAuth is the API's policy and token validation, built before the
// store opens so that a bad policy file or Keystone section stops
// start-up before anything is touched.
type APIAuth struct {
	policy          *policy.Enforcer
	tokens          placementsrv.TokenValidator
	wwwAuthenticate string
}

// PolicyFindings are the policy file's findings 'serve' starts with
// (policy.file_check warn), to be logged.
func (a APIAuth) PolicyFindings() []policy.Finding { return a.policy.Findings }

// NewAPIAuth reads, compiles and checks the policy file and, under
// keystone, builds the token validator. releaseNamed says whether the
// configuration names api.release, for the advice a finding comes with.
func NewAPIAuth(cfg config.Config, releaseNamed bool) (APIAuth, error) {
	enf, err := NewEnforcer(cfg.Policy, cfg.API.ReleaseValue())
	if err != nil {
		return APIAuth{}, err
	}
	if err := checkPolicyFile(cfg, enf, releaseNamed); err != nil {
		return APIAuth{}, err
	}
	if cfg.API.AuthStrategy != "keystone" {
		return APIAuth{policy: enf}, nil
	}
	k := cfg.KeystoneAuthToken
	tokens, err := keystone.New(keystone.Options{
		AuthURL: k.AuthURL, Username: k.Username, Password: k.Password,
		ProjectName: k.ProjectName, UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName,
		Timeout: k.Timeout, CacheSize: cacheSize(k.CacheSize), CacheTTL: k.CacheTTL,
	})
	if err != nil {
		return APIAuth{}, err
	}
	www := k.WWWAuthenticateURI
	if www == "" {
		www = k.AuthURL
	}
	return APIAuth{policy: enf, tokens: tokens, wwwAuthenticate: www}, nil
}

// APIOptions are the API server's options over its store, auth and
// metrics handler, with the OWNER_NOVA pre-filter following gate (nil
// when the reconciler does not run here: "auto" then means off).
func APIOptions(cfg config.Config, st store.Store, auth APIAuth, gate placementsrv.OwnerNovaGate, metricsHandler http.Handler, log *zap.Logger, reg prometheus.Registerer) placementsrv.Options {
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
		Limits:               cfg.API.Limits(),
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

// NewEnforcer compiles the policy under release r: 'serve' and 'policy
// list' read the same rules and the same findings.
func NewEnforcer(p config.PolicyConfig, r release.Release) (*policy.Enforcer, error) {
	scope, newDefaults := p.Enforcement(r)
	enf, err := policy.New(policy.Options{File: p.File, EnforceScope: scope, EnforceNewDefaults: newDefaults, Release: r})
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return enf, nil
}

// checkPolicyFile refuses the policy file's findings (a config.Error,
// naming file, line and rule of each) unless policy.file_check is warn:
// upstream would start and then deny those routes to everyone.
func checkPolicyFile(cfg config.Config, enf *policy.Enforcer, releaseNamed bool) error {
	if len(enf.Findings) == 0 || cfg.Policy.FileCheck == config.FileCheckWarn {
		return nil
	}
	rel := cfg.API.ReleaseValue()
	var b strings.Builder
	fmt.Fprintf(&b, "policy file %s does not fit Placement %s's rules", cfg.Policy.File, rel)
	if !releaseNamed {
		fmt.Fprintf(&b, " (api.release is not set: %s is this binary's default)", rel)
	}
	for _, f := range enf.Findings {
		b.WriteString("\n  " + f.String())
	}
	fmt.Fprintf(&b, "\nset api.release to the release the file was written for (one of %s), fix the file, "+
		"or set policy.file_check: %s to start anyway; 'placement-syncd policy list' prints the effective rules",
		strings.Join(release.Names(), ", "), config.FileCheckWarn)
	return config.Error{Err: errors.New(b.String())}
}
