package daemon

import (
	"context"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// releaseBeforeMemory is the release placement-syncd followed before it
// remembered one: binaries without api.release (before it was added,
// with 15.0.0 as its default) served Placement 8.0.0's rules.
const releaseBeforeMemory = release.V8

// checkRelease compares the release served with the one the database
// was last served under. A release the configuration names is recorded
// (a deliberate choice, logged at info when it changes). A release the
// binary chose by default is recorded only on a new, empty database;
// when it differs from the remembered one, or the database holds data
// but remembers none (written by a binary that did not record it), the
// same tokens may now be refused, so it warns, naming both releases and
// the keys that keep the old behaviour, and the release_changed gauge
// says so until the configuration decides. The record is advice, not
// data: a failure to read or write it (replicas starting at once on a
// cluster may abort each other's write) is logged and serve goes on.
func checkRelease(ctx context.Context, p Process) metrics.APIRelease {
	cfg, st, log := p.Config, p.Store, p.Log
	rel := cfg.API.ReleaseValue()
	scope, newDefaults := cfg.Policy.Enforcement(rel)
	info := metrics.APIRelease{Release: rel.String(), Source: "default", EnforceScope: scope, EnforceNewDefaults: newDefaults}
	if p.ReleaseNamed {
		info.Source = "config"
	}
	remembered, ok, err := st.Metadata(ctx, store.MetaServedRelease)
	if err != nil {
		log.Warn("cannot read the release the database was last served under", zap.Error(err))
		return info
	}
	info.Remembered = remembered
	snap, err := st.Snapshot(ctx)
	if err != nil {
		log.Warn("cannot read the database", zap.Error(err))
		return info
	}
	hasData := len(snap.Providers) > 0
	switch {
	case ok && remembered == info.Release:
	case p.ReleaseNamed || (!ok && !hasData):
		if ok {
			log.Info("api.release changed", zap.String("from", remembered), zap.String("to", info.Release))
		}
		if err := st.SetMetadata(ctx, store.MetaServedRelease, info.Release); err != nil {
			log.Warn("cannot record the release served", zap.String("release", info.Release), zap.Error(err))
		}
	case ok:
		info.Changed = true
		warnRelease(log, remembered, "the database was last served under Placement "+remembered, info)
	default:
		info.Changed = true
		old := releaseBeforeMemory.String()
		warnRelease(log, old, "the database holds data but records no served release: it was written by a placement-syncd that did not record it, which followed Placement "+old, info)
	}
	return info
}

// warnRelease logs a release change the configuration did not choose.
func warnRelease(log *zap.Logger, from, why string, info metrics.APIRelease) {
	oldScope, oldNew := release.Default.EnforceDefaults()
	if r, err := release.Parse(from); err == nil {
		oldScope, oldNew = r.EnforceDefaults()
	}
	log.Warn("the Placement release served changed by default: "+why+", and api.release is not set, so this binary follows its default, Placement "+info.Release+
		"; tokens the old release's policy accepted may now get 403. Set api.release: \""+from+"\" to keep the old behaviour"+
		fmt.Sprintf(" (its enforcement defaults: policy.enforce_scope: %t, policy.enforce_new_defaults: %t)", oldScope, oldNew)+
		", or api.release: \""+info.Release+"\" to accept the new one",
		zap.String("from", from), zap.String("to", info.Release),
		zap.Bool("enforce_scope", info.EnforceScope), zap.Bool("enforce_new_defaults", info.EnforceNewDefaults))
}

// startRelease logs the policy file's findings 'serve' starts with
// (policy.file_check warn), checks the release served against the
// database's memory and exports both as metrics.
func startRelease(ctx context.Context, p Process, reg prometheus.Registerer) (metrics.APIRelease, error) {
	for _, f := range p.Auth.PolicyFindings() {
		p.Log.Warn("policy file: "+f.String()+" (policy.file_check is warn: starting anyway)",
			zap.String("file", f.File), zap.Int("line", f.Line), zap.String("rule", f.Rule))
	}
	info := checkRelease(ctx, p)
	if err := metrics.RegisterAPIRelease(reg, info); err != nil {
		return info, fmt.Errorf("register the release metrics: %w", err)
	}
	return info, nil
}
