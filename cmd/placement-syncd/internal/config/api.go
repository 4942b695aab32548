package config

import (
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// defaultMaxMicroversion offers every microversion Placement 8.0.0 has.
var defaultMaxMicroversion = microversion.Max.String()

// MaxMicroversionValue is the validated api.max_microversion.
func (c APIConfig) MaxMicroversionValue() microversion.Version {
	mv, _ := microversion.Parse(c.MaxMicroversion)
	return mv
}

// ReleaseValue is the validated api.release.
func (c APIConfig) ReleaseValue() release.Release {
	r, _ := release.Parse(c.Release)
	return r
}

// NamesRelease reports whether the YAML file at path sets api.release,
// rather than leaving it to the binary's default (placement.conf and the
// command line cannot set it). A release chosen by default may change
// under an upgrade of the binary; 'serve' warns when it did.
func NamesRelease(path string) bool { return yamlSetsKey(path, "api", "release") }

// Limits are the API listener's timeouts and connection limit.
func (c APIConfig) Limits() httpserve.Limits {
	return httpserve.Limits{ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout, IdleTimeout: c.IdleTimeout, MaxConnections: c.MaxConnections}
}
