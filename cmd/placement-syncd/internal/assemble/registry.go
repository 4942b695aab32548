package assemble

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/metrics"
)

// Build is what the binary knows of itself ('placement-syncd version',
// the build_info metric, the agent's service record).
type Build struct {
	Version   string
	Commit    string
	GoVersion string
	Platform  string
}

// NewRegistry is the process's one registry: every component registers
// its metrics in it through its Options.Registerer.
func NewRegistry(b Build) *prometheus.Registry {
	return metrics.NewRegistry(metrics.BuildInfo{Version: b.Version, Commit: b.Commit, GoVersion: b.GoVersion})
}
