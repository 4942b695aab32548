package novafull

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// InstallIronicDriver is what Nova 26.2's ironic driver needs besides
// python3-nova: it talks to Ironic through python-ironicclient as well
// as openstacksdk.
const InstallIronicDriver = "apt-get install --no-install-recommends python3-ironicclient"

const ironicClient = "/usr/lib/python3/dist-packages/ironicclient/__init__.py"

// IronicCompute is a nova-compute running Nova's ironic driver
// (compute_driver = ironic.IronicDriver) against an Ironic API reached
// without Keystone: every node of that Ironic with a resource class
// becomes a compute node of Host, with a provider named (and, since the
// compute node takes the node's uuid, identified) by the node's uuid.
type IronicCompute struct {
	Host string
	// Endpoint is the Ironic API's URL with its version,
	// http://127.0.0.1:N/v1.
	Endpoint string
	// Nodes are the uuids of the nodes whose providers the start waits
	// for.
	Nodes []string
	// Interval is [DEFAULT] update_resources_interval: how often the
	// compute reads Ironic and reports its nodes; 0 means 2 s (Nova's
	// default periodic spacing is 60 s).
	Interval time.Duration
}

// StartIronicCompute starts the compute and waits until it is up, mapped
// to cell1, and each of c.Nodes has its provider with inventory in the
// current Placement. StopComputes stops it with the others.
func (n *Nova) StartIronicCompute(ctx context.Context, c IronicCompute) error {
	if _, err := os.Stat(ironicClient); err != nil {
		return fmt.Errorf("novafull: %s %w (%s): %w", ironicClient, svcproc.ErrNotInstalled, InstallIronicDriver, err)
	}
	conf, err := n.ironicComputeConf(c)
	if err != nil {
		return err
	}
	// A host started before was forced down when it stopped.
	if err := n.ForceDown(ctx, c.Host, false); err != nil {
		return err
	}
	if err := n.launchCompute(c.Host, conf); err != nil {
		return err
	}
	if err := n.waitServices(ctx, nil, []string{c.Host}, 180*time.Second); err != nil {
		return err
	}
	// The compute nodes exist once the first periodic has read Ironic:
	// discover_hosts maps the host only then.
	if err := n.waitProviders(ctx, c.Nodes, 180*time.Second); err != nil {
		return err
	}
	return n.discover(ctx, []string{c.Host})
}

// ironicComputeConf writes the compute's config: the fake driver's file
// with the ironic driver and its [ironic] section added; periodic tasks
// start at once (Nova delays them by up to a minute by default, to
// spread many computes' load). api_max_retries
// and api_retry_interval bound how long the driver waits for a deploy
// or an undeploy (polling Ironic each interval).
func (n *Nova) ironicComputeConf(c IronicCompute) (string, error) {
	path, err := n.computeConf(Compute{Host: c.Host})
	if err != nil {
		return "", err
	}
	interval := c.Interval
	if interval == 0 {
		interval = 2 * time.Second
	}
	extra := fmt.Sprintf(`[DEFAULT]
compute_driver = ironic.IronicDriver
update_resources_interval = %d
periodic_fuzzy_delay = 0
[ironic]
auth_type = none
endpoint_override = %s
api_max_retries = 120
api_retry_interval = 1
`, max(1, int(interval.Seconds())), c.Endpoint)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("novafull: %w", err)
	}
	_, err = f.WriteString(extra)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("novafull: %s: %w", filepath.Base(path), err)
	}
	return path, nil
}

// BaremetalFlavor returns the id of the flavor named name that asks for
// one unit of the resource class rc and nothing else (VCPU, MEMORY_MB
// and DISK_GB overridden to 0, as Ironic's documentation has it),
// creating it when there is none.
func (n *Nova) BaremetalFlavor(ctx context.Context, name, rc string) (string, error) {
	id, err := n.Flavor(ctx, name, 1, 512, 0)
	if err != nil {
		return "", err
	}
	specs := map[string]any{"extra_specs": map[string]string{
		"resources:" + rc: "1", "resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0",
	}}
	if err := n.Call(ctx, http.StatusOK, http.MethodPost, "/flavors/"+url.PathEscape(id)+"/os-extra_specs", specs, nil); err != nil {
		return "", err
	}
	return id, nil
}

// ForceDown marks the nova-compute service of host forced down, or no
// longer (a host without a service is left alone). An ironic compute
// that stopped is otherwise still "up" for service_down_time, and the
// next ironic compute, on another host, would share Ironic's nodes with
// it on its hash ring and report only its part of them.
func (n *Nova) ForceDown(ctx context.Context, host string, down bool) error {
	ids, err := n.ComputeServices(ctx, host)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := n.Call(ctx, http.StatusOK, http.MethodPut, "/os-services/"+url.PathEscape(id), map[string]bool{"forced_down": down}, nil); err != nil {
			return err
		}
	}
	return nil
}
