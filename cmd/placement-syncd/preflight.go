package main

import (
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// preflight checks what a loaded configuration names that config.Load
// cannot compile itself, before any command opens anything: the policy
// file, compiled and checked as serve does (assemble.NewAPIAuth, which
// touches no network). A configuration is the same for every command,
// so every command refuses it the same way, with exit 2. A command that
// reports on the configuration (policy list, version) only compiles it,
// so that it can show what serve would refuse. releaseNamed says whether
// the configuration names api.release.
func preflight(cfg config.Config, releaseNamed, reportsPolicy bool) error {
	var err error
	if reportsPolicy {
		_, err = assemble.NewEnforcer(cfg.Policy, cfg.API.ReleaseValue())
	} else {
		_, err = assemble.NewAPIAuth(cfg, releaseNamed)
	}
	if err != nil {
		return config.Error{Err: err}
	}
	return nil
}
