package main

// MetricsConfig configures the Prometheus endpoint.
type MetricsConfig struct {
	// Enabled serves /metrics. The metrics are collected either way (it
	// costs little); this only decides whether anybody can scrape them.
	Enabled bool `yaml:"enabled"`
	// Listen is a separate host:port for /metrics. Empty serves /metrics
	// on the API listener, outside authentication.
	Listen string `yaml:"listen"`
	// OpenStackCompat also exports openstack-exporter's
	// openstack_placement_* family, for existing dashboards.
	OpenStackCompat bool `yaml:"openstack_compat"`
}

func defaultMetricsConfig() MetricsConfig {
	return MetricsConfig{Enabled: true, Listen: "", OpenStackCompat: true}
}

// validate reports bad values through bad (Config.Validate's collector).
func (m *MetricsConfig) validate(c *Config, bad func(key, format string, args ...any)) {
	if m.Listen == "" {
		return
	}
	if err := checkListen(m.Listen); err != nil {
		bad("metrics.listen", "invalid address %q: %v", m.Listen, err)
		return
	}
	if m.Listen == c.API.Listen {
		bad("metrics.listen", "%q is api.listen; leave metrics.listen empty to serve /metrics on the API listener", m.Listen)
	}
}
