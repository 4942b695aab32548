package novafull

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/placement-syncd/placement-syncd/testkit/novaconf"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// writeConf writes the nova.conf every service reads and the API's paste
// pipelines. The scheduler
// options make its choice deterministic: the best host only, no shuffle
// among equals. Periodic tasks that would call the doubles for nothing
// are off, and services stop quickly. A long service_down_time: a
// compute whose heartbeat a loaded machine delays must not be filtered
// out (a host restarted between scenarios reports its new provider
// before the harness goes on, so a stale "up" does no harm). Availability
// zones and tenant aggregates become member_of in Placement (26.2 has the
// first on by default; it is spelled out); a project no aggregate names
// may still go anywhere, so scenarios without aggregates are unaffected.
func (n *Nova) writeConf() error {
	port, err := svcproc.FreePort()
	if err != nil {
		return err
	}
	n.apiPort = port
	n.Conf = filepath.Join(n.dir, "nova.conf")
	own := fmt.Sprintf(`[DEFAULT]
transport_url = %[2]s
state_path = %[1]s/state
use_stderr = true
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_listen_port = %[3]d
osapi_compute_workers = 1
compute_driver = fake.MediumFakeDriver
ram_allocation_ratio = 1.0
report_interval = 2
service_down_time = 120
graceful_shutdown_timeout = 5
heal_instance_info_cache_interval = -1
sync_power_state_interval = -1
instance_usage_audit = false
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = %[4]s
[scheduler]
workers = 1
query_placement_for_availability_zone = true
limit_tenants_to_placement_aggregate = true
placement_aggregate_required_for_tenants = false
discover_hosts_in_cells_interval = -1
[filter_scheduler]
host_subset_size = 1
shuffle_best_same_weighed_hosts = false
[conductor]
workers = 1
[glance]
api_servers = %[5]s
[neutron]
auth_type = none
endpoint_override = %[6]s
[oslo_messaging_notifications]
driver = noop
`, n.dir, n.transport, n.apiPort, filepath.Join(n.dir, "api-paste.ini"), n.glance.URL, n.neutron.URL)
	err = novaconf.Write(n.Conf, own, novaconf.Shared{Dir: n.dir, APIDatabase: novaconf.DatabaseURL(n.DB, "nova_api"),
		Database: novaconf.DatabaseURL(n.DB, "nova_cell1"), Placement: n.router.URL})
	if err != nil {
		return err
	}
	return writePaste(filepath.Join(n.dir, "api-paste.ini"))
}

// writePaste writes Debian's paste pipelines with the keystone ones
// trusting the identity headers the caller sends (no authtoken
// middleware). noauth2 would be simpler but leaves the request context
// without a token, and Nova then cannot call Glance for the image.
func writePaste(path string) error {
	b, err := os.ReadFile(novaconf.APIPaste)
	if err != nil {
		return fmt.Errorf("novafull: %w", err)
	}
	s := strings.ReplaceAll(string(b), " authtoken keystonecontext ", " keystonecontext ")
	if s == string(b) {
		return fmt.Errorf("novafull: %s has no authtoken in its keystone pipelines", novaconf.APIPaste)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		return fmt.Errorf("novafull: %w", err)
	}
	return nil
}

// computeConf writes a compute's own config file, read after nova.conf.
func (n *Nova) computeConf(c Compute) (string, error) {
	dir := filepath.Join(n.dir, "compute-"+c.Host)
	for _, d := range []string{"instances", "lock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return "", fmt.Errorf("novafull: %w", err)
		}
	}
	conf := fmt.Sprintf(`[DEFAULT]
host = %s
state_path = %[2]s
instances_path = %[2]s/instances
reserved_host_memory_mb = %[3]d
[oslo_concurrency]
lock_path = %[2]s/lock
`, c.Host, dir, c.ReservedMemoryMB)
	path := filepath.Join(dir, "compute.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", fmt.Errorf("novafull: %w", err)
	}
	return path, nil
}
