// Package ironic is the bare-metal driver: one root provider per Ironic
// node, as Nova's ironic virt driver reports it, except that a node that
// cannot take an instance keeps its inventory, fully reserved.
package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
)

// DefaultMicroversion is the Ironic API version Nova uses
// (nova/virt/ironic/driver.py IRONIC_API_VERSION); below it resource_class
// and traits are missing from node documents.
const DefaultMicroversion = "1.46"

// ShardMicroversion is the first Ironic API version with node shards
// (Ironic 21.4 answers up to it).
const ShardMicroversion = "1.82"

// LatestMicroversion asks Ironic for its highest version.
const LatestMicroversion = "latest"

// Options configures the driver. Exactly one of Endpoint, Cloud or File is
// the node source.
type Options struct {
	// Endpoint is a noauth Ironic API URL (e.g. http://ironic:6385/v1),
	// with Token sent as X-Auth-Token when set.
	Endpoint string
	Token    string
	// Cloud is a clouds.yaml entry (Keystone auth; Ironic from the
	// catalog); CloudsFile its file, or the usual places when empty.
	Cloud      string
	CloudsFile string
	// File holds the JSON of Ironic's GET /v1/nodes/detail.
	File string
	// Microversion sent to the Ironic API: at least 1.46, or "latest"
	// (the server's highest).
	Microversion string
	// ConductorGroup, when set, limits the driver to that group's nodes.
	ConductorGroup string
	// Shard, when set, limits the driver to that shard's nodes (API
	// 1.82 and later).
	Shard string
	// PageSize is the limit asked of each page of the node list; 0 takes
	// the server's [api] max_limit (1000 by default).
	PageSize int
	// SkipReserveInUse turns off reserving nodes that have an instance
	// (Nova's [workarounds]skip_reserve_in_use_ironic_nodes).
	SkipReserveInUse bool
	// DeferToNova leaves a node's provider to Nova's ironic driver once
	// Placement shows that a nova-compute reports it (NovaComputeTraits):
	// both would write the same provider, and Nova's removes the traits
	// it does not set (OWNER_NOVA among them) whenever it re-reads it.
	DeferToNova bool
	// HTTPClient for the Ironic API; nil means a 30 s timeout client.
	HTTPClient *http.Client
	Logger     *zap.Logger
}

// Driver reports Ironic nodes. It is safe for concurrent use.
type Driver struct {
	opts   Options
	client *gophercloud.ServiceClient // nil with a file source
	log    *zap.Logger
	unrc   unclassified
}

// New validates opts and, for an API source, builds the client (with
// Keystone, authenticating now).
func New(ctx context.Context, opts Options) (*Driver, error) {
	n := 0
	for _, s := range []string{opts.Endpoint, opts.Cloud, opts.File} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("ironic: exactly one of endpoint, cloud or file must be set")
	}
	if opts.Microversion == "" {
		opts.Microversion = DefaultMicroversion
	}
	if err := CheckMicroversion(opts.Microversion, opts.Shard != ""); err != nil {
		return nil, fmt.Errorf("ironic: %w", err)
	}
	if opts.PageSize < 0 {
		return nil, fmt.Errorf("ironic: page size %d is negative", opts.PageSize)
	}
	d := &Driver{opts: opts, log: opts.Logger}
	if d.log == nil {
		d.log = zap.NewNop()
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	var err error
	switch {
	case opts.Endpoint != "":
		d.client, err = noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: opts.Endpoint})
		if err == nil {
			d.client.HTTPClient = *hc
			if opts.Token != "" {
				d.client.SetToken(opts.Token)
			}
		}
	case opts.Cloud != "":
		d.client, err = keystoneClient(ctx, opts, hc)
	}
	if err != nil {
		return nil, fmt.Errorf("ironic: %w", err)
	}
	if d.client != nil {
		d.client.Microversion = opts.Microversion
	}
	return d, nil
}

func keystoneClient(ctx context.Context, opts Options, hc *http.Client) (*gophercloud.ServiceClient, error) {
	// Keystone and the catalog, or a standalone Ironic (auth_type none or
	// http_basic) at its endpoint override; with the entry's TLS settings.
	entry, err := cloudsyaml.Read(cloudsyaml.Source{File: opts.CloudsFile, Cloud: opts.Cloud})
	if err != nil {
		return nil, err
	}
	if hc, err = entry.HTTPClient(hc); err != nil {
		return nil, err
	}
	return entry.ServiceClient(ctx, hc, "baremetal")
}

// CheckMicroversion accepts "latest" or a version of at least 1.46 (at
// least 1.82 when a shard is selected).
func CheckMicroversion(v string, shard bool) error {
	if v == LatestMicroversion {
		return nil
	}
	var major, minor int
	if n, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil || n != 2 || fmt.Sprintf("%d.%d", major, minor) != v {
		return fmt.Errorf("microversion %q is not MAJOR.MINOR or %q", v, LatestMicroversion)
	}
	if major < 1 || (major == 1 && minor < 46) {
		return fmt.Errorf("microversion %q is below %s, where nodes gained resource_class and traits", v, DefaultMicroversion)
	}
	if shard && major == 1 && minor < 82 {
		return fmt.Errorf("microversion %q is below %s, which a shard needs", v, ShardMicroversion)
	}
	return nil
}

// Name implements drivers.Driver.
func (d *Driver) Name() string { return "ironic" }

// RetiresVanished implements drivers.Retiring: a node deleted from
// Ironic (or moved out of the conductor group) is retired as Nova does.
func (d *Driver) RetiresVanished() {}

// Close implements drivers.Driver; the driver holds no resources.
func (d *Driver) Close() error { return nil }

// Observe lists the nodes and returns one root provider per node that has
// a resource class. Any failure to read the source is returned, so that
// Placement is left as it is.
func (d *Driver) Observe(ctx context.Context) (*drivers.Tree, error) {
	ns, err := d.nodes(ctx)
	if err != nil {
		return nil, err
	}
	tree := &drivers.Tree{Providers: make([]drivers.Provider, 0, len(ns))}
	var unclassed []string
	for _, n := range ns {
		if d.opts.ConductorGroup != "" && !strings.EqualFold(n.ConductorGroup, d.opts.ConductorGroup) {
			continue
		}
		p, ok := Provider(n, !d.opts.SkipReserveInUse)
		if !ok {
			// Nova raises NoResourceClass and leaves the provider as
			// it is; so does the agent, through Keep.
			if n.UUID != "" {
				unclassed = append(unclassed, n.UUID)
			}
			continue
		}
		if d.opts.DeferToNova {
			p.DeferTo = NovaComputeTraits()
		}
		tree.Providers = append(tree.Providers, p)
	}
	tree.Keep = unclassed
	d.unrc.report(d.log, unclassed)
	return tree, nil
}

func (d *Driver) nodes(ctx context.Context) ([]nodes.Node, error) {
	if d.client == nil {
		f, err := os.Open(d.opts.File)
		if err != nil {
			return nil, fmt.Errorf("ironic: read nodes: %w", err)
		}
		defer f.Close()
		return ParseNodes(f)
	}
	return d.listNodes(ctx)
}

// ParseNodes decodes the body of GET /v1/nodes/detail.
func ParseNodes(r io.Reader) ([]nodes.Node, error) {
	var doc struct {
		Nodes *[]nodes.Node `json:"nodes"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("ironic: decode nodes: %w", err)
	}
	if doc.Nodes == nil {
		return nil, errors.New(`ironic: decode nodes: no "nodes" list`)
	}
	return *doc.Nodes, nil
}

// NovaComputeTraits are the traits Nova's resource tracker puts on every
// provider its ironic driver reports (the driver's capabilities: attach
// interface, and the image types it deploys); the agent never sets them
// unless a node carries them as its own traits.
func NovaComputeTraits() []string {
	return []string{"COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_IMAGE_TYPE_RAW", "COMPUTE_IMAGE_TYPE_QCOW2", "COMPUTE_IMAGE_TYPE_AMI"}
}

// cleaningStates are the provision states of a node being cleaned.
var cleaningStates = []string{"cleaning", "clean wait", "clean failed", "clean hold"}

// Unavailable is Nova's _node_resources_unavailable, with a reason: in
// maintenance, power state error or unknown, or a provision state other
// than available (or none). With reserveInUse, a node with an instance is
// also held back (nova 27, LP#1974070), labelled in_use whatever its
// provision state (an active node). "" means available.
func Unavailable(n nodes.Node, reserveInUse bool) string {
	switch {
	case n.Maintenance:
		return drivers.ReasonMaintenance
	case slices.Contains(cleaningStates, n.ProvisionState):
		return drivers.ReasonCleaning
	case n.PowerState == "" || n.PowerState == "error":
		return drivers.ReasonPower
	case reserveInUse && n.InstanceUUID != "":
		// Before the provision state: an active node with an instance is
		// in use, not merely "not available".
		return drivers.ReasonInUse
	case n.ProvisionState != "" && n.ProvisionState != string(nodes.Available):
		return drivers.ReasonNotAvailable
	}
	return ""
}

// Provider is the desired provider of one node: uuid and name are the
// node uuid, one CUSTOM_<resource class> inventory of 1, and the node's
// traits plus COMPUTE_NODE and OWNER_NOVA. ok is false without a resource
// class (Nova raises NoResourceClass).
func Provider(n nodes.Node, reserveInUse bool) (drivers.Provider, bool) {
	if n.ResourceClass == "" || n.UUID == "" {
		return drivers.Provider{}, false
	}
	traits := append(slices.Clone(n.Traits), "COMPUTE_NODE", drivers.OwnerNova)
	slices.Sort(traits)
	return drivers.Provider{
		UUID:  n.UUID,
		Name:  n.UUID,
		Owner: drivers.OwnerNova,
		Inventories: map[string]drivers.Inventory{
			drivers.NormalizeName(n.ResourceClass): {
				Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1,
				Unavailable: Unavailable(n, reserveInUse),
			},
		},
		Traits: slices.Compact(traits),
	}, true
}

// The agent finds the capability by a type assertion; this keeps the
// method in step with its declaration.
var _ drivers.Retiring = (*Driver)(nil)
