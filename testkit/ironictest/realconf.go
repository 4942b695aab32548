package ironictest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// writeConfig writes dir/ironic.conf for a standalone Ironic and makes
// the directories it names. Every interface of fake-hardware is fake;
// "direct" deploy is enabled as well, as the only way to make a node wait
// for a ramdisk that never calls back (clean wait, then clean failed).
func writeConfig(dir string, o Options, apiPort, rpcPort int) (string, error) {
	return renderConfig(dir, "ironic.conf", o, apiPort, rpcPort, "127.0.0.1", "")
}

// renderConfig writes dir/name for a service reached at host (its
// JSON-RPC address, for a conductor) in conductor group group.
func renderConfig(dir, name string, o Options, apiPort, rpcPort int, host, group string) (string, error) {
	for _, sub := range []string{"state", "tmp", "lock", "http"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", fmt.Errorf("ironictest: %w", err)
		}
	}
	timeout := strconv.Itoa(max(1, int(o.CallbackTimeout.Seconds())))
	maxLimit := ""
	if o.MaxLimit > 0 {
		maxLimit = "max_limit = " + strconv.Itoa(o.MaxLimit)
	}
	root := "http://127.0.0.1:" + strconv.Itoa(apiPort)
	conf := strings.NewReplacer(
		"@DIR@", dir, "@API@", strconv.Itoa(apiPort), "@RPC@", strconv.Itoa(rpcPort),
		"@TIMEOUT@", timeout, "@MAXLIMIT@", maxLimit, "@ROOT@", root, "@HOST@", host, "@GROUP@", group,
	).Replace(configTemplate)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", fmt.Errorf("ironictest: %w", err)
	}
	return path, nil
}

// configTemplate: [DEFAULT] host is the address the API reaches the
// conductor's JSON-RPC server at; [service_catalog] and [deploy] give the
// direct deploy interface the URLs it checks for, none of which is ever
// fetched. The hash ring is refreshed every second, so that a conductor
// started by a test serves its group at once.
const configTemplate = `[DEFAULT]
auth_strategy = noauth
host = @HOST@
hash_ring_reset_interval = 1
rpc_transport = json-rpc
debug = false
use_stderr = true
state_path = @DIR@/state
tempdir = @DIR@/tmp
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake
enabled_boot_interfaces = fake
enabled_console_interfaces = fake
enabled_deploy_interfaces = fake,direct
enabled_inspect_interfaces = fake
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake
enabled_rescue_interfaces = fake
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake
default_bios_interface = fake
default_boot_interface = fake
default_console_interface = fake
default_deploy_interface = fake
default_inspect_interface = fake
default_management_interface = fake
default_network_interface = noop
default_power_interface = fake
default_raid_interface = fake
default_rescue_interface = fake
default_storage_interface = noop
default_vendor_interface = fake

[api]
host_ip = 127.0.0.1
port = @API@
api_workers = 1
@MAXLIMIT@

[json_rpc]
auth_strategy = noauth
host_ip = @HOST@
port = @RPC@

[conductor]
conductor_group = @GROUP@
automated_clean = true
sync_power_state_interval = 5
check_provision_state_interval = 1
clean_callback_timeout = @TIMEOUT@
deploy_callback_timeout = @TIMEOUT@
rescue_callback_timeout = @TIMEOUT@

[database]
connection = sqlite:///@DIR@/ironic.sqlite

[deploy]
http_url = http://127.0.0.1:9
http_root = @DIR@/http

[service_catalog]
endpoint_override = @ROOT@

[dhcp]
dhcp_provider = none

[oslo_concurrency]
lock_path = @DIR@/lock
`
