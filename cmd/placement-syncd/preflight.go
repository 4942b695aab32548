package main

import (
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// preflight checks what a loaded configuration names that config.Load
// cannot compile itself, before any command opens anything: the policy
// file, compiled as serve compiles it (assemble.NewAPIAuth, which
// touches no network). A configuration is the same for every command,
// so every command refuses it the same way, with exit 2.
func preflight(cfg config.Config) error {
	if _, err := assemble.NewAPIAuth(cfg); err != nil {
		return config.Error{Err: err}
	}
	return nil
}
