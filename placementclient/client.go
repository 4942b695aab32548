// Package placementclient is the one way the agent and the reconciler talk
// to a Placement service — ours or OpenStack Placement 8.0.0. It is built
// on gophercloud/v2 and hides its pitfalls: the version header that a
// hand-built client does not send, Create accepting only 200, partial
// inventory records, float32 allocation ratios and 409s that need their
// error code decoded.
//
// Every call picks its own microversion: the highest the server offers up
// to the one the call needs, so one Client works against old and new
// servers. A Client is safe for concurrent use.
package placementclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"

	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
	"github.com/placement-syncd/placement-syncd/microversion"
)

// Options configures a Client. Either Endpoint (noauth, with Token) or
// Keystone must be set.
type Options struct {
	// Endpoint is Placement's URL, e.g. http://127.0.0.1:8778. With
	// Keystone set it overrides the catalog's endpoint.
	Endpoint string
	// Token is sent as X-Auth-Token without Keystone (Placement's noauth2:
	// "admin" is an administrator).
	Token string
	// Keystone, when set, authenticates against Keystone and finds
	// Placement in the catalog.
	Keystone *KeystoneOptions
	// HTTPClient is used for every request; nil means a client with a
	// 30 s timeout.
	HTTPClient *http.Client
	// MaxMicroversion, when set, is the highest microversion ever sent,
	// even if the server offers more.
	MaxMicroversion microversion.Version
}

// KeystoneOptions selects Keystone credentials: a cloud from clouds.yaml,
// or explicit password credentials.
type KeystoneOptions struct {
	// Cloud is the clouds.yaml entry (OS_CLOUD); CloudsFile its file, or
	// the usual locations when empty.
	Cloud      string
	CloudsFile string
	// Explicit credentials, used when Cloud is empty.
	AuthURL           string
	Username          string
	Password          string
	ProjectName       string
	UserDomainName    string
	ProjectDomainName string
	RegionName        string
	// Interface is public, internal or admin (default public).
	Interface string
}

// Client talks to one Placement service.
type Client struct {
	base *gophercloud.ServiceClient
	cap  microversion.Version
	sent *requestCounter

	mu       sync.Mutex
	min, max microversion.Version
	known    bool
}

// New builds a Client. With Keystone it authenticates now; without, it
// makes no request: the server's versions are discovered on first use, so
// a Client can be built while Placement is down.
func New(ctx context.Context, opts Options) (*Client, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	sent := &requestCounter{}
	var sc *gophercloud.ServiceClient
	switch {
	case opts.Keystone != nil && opts.Keystone.Cloud != "":
		// The entry's TLS settings go under the replaying transport.
		var err error
		if sc, err = cloudClient(ctx, opts.Keystone, hc, sent); err != nil {
			return nil, err
		}
		if opts.Endpoint != "" {
			sc.Endpoint = gophercloud.NormalizeURL(opts.Endpoint)
		}
	case opts.Keystone != nil:
		var err error
		if sc, err = keystoneClient(ctx, opts.Keystone, withReplayableWrites(hc, sent)); err != nil {
			return nil, err
		}
		if opts.Endpoint != "" {
			sc.Endpoint = gophercloud.NormalizeURL(opts.Endpoint)
		}
	case opts.Endpoint != "":
		pc := &gophercloud.ProviderClient{HTTPClient: *withReplayableWrites(hc, sent)}
		if opts.Token != "" {
			pc.SetToken(opts.Token)
		}
		sc = &gophercloud.ServiceClient{
			ProviderClient: pc,
			Endpoint:       gophercloud.NormalizeURL(opts.Endpoint),
			// gophercloud sends OpenStack-API-Version only when Type is set,
			// and only openstack.NewPlacementV1 sets it; without it every
			// request would be answered as 1.0.
			Type: "placement",
		}
	default:
		return nil, errors.New("placementclient: an endpoint or Keystone options are required")
	}
	capv := opts.MaxMicroversion
	if capv == (microversion.Version{}) || microversion.Max.Less(capv) {
		capv = microversion.Max
	}
	return &Client{base: sc, cap: capv, sent: sent}, nil
}

const defaultTimeout = 30 * time.Second

// cloudClient is the placement client of a clouds.yaml entry: Keystone
// and the catalog, or (auth_type none, http_basic, admin_token) the
// entry's endpoint override.
func cloudClient(ctx context.Context, ko *KeystoneOptions, hc *http.Client, sent *requestCounter) (*gophercloud.ServiceClient, error) {
	entry, err := cloudsyaml.Read(cloudsyaml.Source{File: ko.CloudsFile, Cloud: ko.Cloud})
	if err != nil {
		return nil, fmt.Errorf("placementclient: %w", err)
	}
	if hc, err = entry.HTTPClient(hc); err != nil {
		return nil, fmt.Errorf("placementclient: %w", err)
	}
	sc, err := entry.ServiceClient(ctx, withReplayableWrites(hc, sent), "placement")
	if err != nil {
		return nil, fmt.Errorf("placementclient: %w", err)
	}
	return sc, nil
}

// keystoneClient authenticates with explicit credentials and returns the
// catalog's placement client.
func keystoneClient(ctx context.Context, ko *KeystoneOptions, hc *http.Client) (*gophercloud.ServiceClient, error) {
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: ko.AuthURL,
		Username:         ko.Username,
		Password:         ko.Password,
		DomainName:       ko.UserDomainName,
		TenantName:       ko.ProjectName,
	}
	if ko.ProjectName != "" {
		ao.Scope = &gophercloud.AuthScope{ProjectName: ko.ProjectName, DomainName: ko.ProjectDomainName}
	}
	eo := gophercloud.EndpointOpts{Region: ko.RegionName}
	switch strings.ToLower(ko.Interface) {
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	}
	ao.AllowReauth = true
	pc, err := openstack.NewClient(ao.IdentityEndpoint)
	if err != nil {
		return nil, fmt.Errorf("placementclient: keystone client: %w", err)
	}
	pc.HTTPClient = *hc
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		return nil, fmt.Errorf("placementclient: keystone authentication: %w", err)
	}
	sc, err := openstack.NewPlacementV1(pc, eo)
	if err != nil {
		return nil, fmt.Errorf("placementclient: placement endpoint from the catalog: %w", err)
	}
	return sc, nil
}

// ServiceClient is the gophercloud client calls go through (its
// endpoint, token and Keystone session), for requests this package does
// not wrap; it carries no microversion.
func (c *Client) ServiceClient() *gophercloud.ServiceClient { return c.base }

// Endpoint is the Placement URL in use.
func (c *Client) Endpoint() string { return c.base.Endpoint }

// Versions returns the server's microversion range (capped by
// Options.MaxMicroversion), asking the server the first time.
func (c *Client) Versions(ctx context.Context) (min, max microversion.Version, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known {
		return c.min, c.max, nil
	}
	var doc struct {
		Versions []struct {
			Min string `json:"min_version"`
			Max string `json:"max_version"`
		} `json:"versions"`
	}
	_, err = c.base.Get(ctx, c.base.Endpoint, &doc, &gophercloud.RequestOpts{OkCodes: []int{200}})
	if err != nil {
		return min, max, wrapErr("discover versions", err)
	}
	if len(doc.Versions) == 0 {
		return min, max, &Error{Op: "discover versions", kind: ErrUnsupported, Detail: "no versions in GET /"}
	}
	// Padding around a version document's numbers is tolerated, as it
	// always was; the numbers themselves are read strictly.
	if min, err = microversion.Parse(strings.TrimSpace(doc.Versions[0].Min)); err == nil {
		max, err = microversion.Parse(strings.TrimSpace(doc.Versions[0].Max))
	}
	if err != nil {
		return min, max, fmt.Errorf("discover versions: %w", err)
	}
	if c.cap.Less(max) {
		max = c.cap
	}
	c.min, c.max, c.known = min, max, true
	return min, max, nil
}

// Forget drops the discovered versions, so that the next call asks again
// (for a server that may have been upgraded or replaced).
func (c *Client) Forget() {
	c.mu.Lock()
	c.known = false
	c.mu.Unlock()
}

// at returns a service client for one call: the highest microversion the
// server supports up to want, and that version. Each call gets its own
// shallow copy, so concurrent calls at different versions do not race.
func (c *Client) at(ctx context.Context, want microversion.Version) (*gophercloud.ServiceClient, microversion.Version, error) {
	min, max, err := c.Versions(ctx)
	if err != nil {
		return nil, microversion.Version{}, err
	}
	v := want
	if max.Less(v) {
		v = max
	}
	if v.Less(min) {
		v = min
	}
	sc := *c.base
	sc.Microversion = v.String()
	return &sc, v, nil
}

// atLeast is at, failing with ErrUnsupported when the server is older than
// need.
func (c *Client) atLeast(ctx context.Context, op string, need, want microversion.Version) (*gophercloud.ServiceClient, microversion.Version, error) {
	sc, v, err := c.at(ctx, want)
	if err != nil {
		return nil, v, err
	}
	if v.Less(need) {
		return nil, v, &Error{Op: op, kind: ErrUnsupported, Detail: fmt.Sprintf("needs %s, server offers up to %s", need, v)}
	}
	return sc, v, nil
}
