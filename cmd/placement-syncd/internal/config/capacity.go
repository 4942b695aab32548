package config

import "time"

// CapacityConfig configures capacity by flavor (docs/capacity.md): how
// many more of each Nova flavor fit, exported as metrics and answered by
// GET /_placement-syncd/capacity and `placement-syncd capacity`. Nova's
// flavors and aggregates are read from reconciler.nova.
type CapacityConfig struct {
	// Enabled reads Nova's flavors and aggregates and counts them at
	// scrape time; off, neither the metrics nor the route exist.
	Enabled bool `yaml:"enabled"`
	// Refresh is how often flavors and aggregates are read again.
	Refresh time.Duration `yaml:"refresh"`
	// DefaultZone is Nova's default_availability_zone, the zone of hosts
	// in no aggregate with one.
	DefaultZone string `yaml:"default_zone"`
	// PerHost exports placement_syncd_flavor_capacity_host, one series per
	// flavor and host.
	PerHost bool `yaml:"per_host"`
	// OSCapacityMetrics exports os-capacity's families, for its dashboards.
	OSCapacityMetrics bool `yaml:"os_capacity_metrics"`
}

func defaultCapacityConfig() CapacityConfig {
	return CapacityConfig{Refresh: 5 * time.Minute, DefaultZone: "nova"}
}

// checkCapacity checks the capacity section, and that Nova can be read
// when it is on.
func checkCapacity(cfg *Config, p *problems) {
	c := cfg.Capacity
	if c.Refresh <= 0 {
		p.bad("capacity.refresh", "must be positive, got %s", c.Refresh)
	}
	if c.DefaultZone == "" {
		p.bad("capacity.default_zone", "must not be empty")
	}
	nova := cfg.Reconciler.Nova
	if c.Enabled && nova.File == "" && nova.Endpoint == "" && nova.Cloud == "" {
		p.bad("capacity.enabled", "capacity by flavor reads Nova's flavors and aggregates: set reconciler.nova.file, endpoint or cloud")
	}
}
