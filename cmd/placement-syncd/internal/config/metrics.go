package config

import "strings"

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

func checkMetrics(c *Config, p *problems) {
	m := c.Metrics
	if m.Listen == "" {
		return
	}
	if err := listenError(m.Listen); err != nil {
		p.bad("metrics.listen", "invalid address %q: %v", m.Listen, err)
		return
	}
	// Port 0 picks a free port on each listener, so only a fixed port can
	// clash.
	if m.Listen == c.API.Listen && !strings.HasSuffix(m.Listen, ":0") {
		p.bad("metrics.listen", "%q is api.listen; leave metrics.listen empty to serve /metrics on the API listener", m.Listen)
	}
}
