package cloudsyaml

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// tlsConfig builds the entry's TLS settings; nil when it sets none, so
// that the system's roots apply.
func (e *Entry) tlsConfig() (*tls.Config, error) {
	d := &e.doc
	if d.CACert == "" && d.Cert == "" && d.Key == "" && d.Verify == nil {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if d.CACert != "" {
		pem, err := os.ReadFile(expandHome(d.CACert))
		if err != nil {
			return nil, e.errorf("cacert", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, e.errorf("cacert", "%s holds no PEM certificate", d.CACert)
		}
		cfg.RootCAs = pool
	}
	// verify: false is the operator's explicit choice in clouds.yaml.
	cfg.InsecureSkipVerify = d.Verify != nil && !*d.Verify //nolint:gosec
	switch {
	case d.Cert != "":
		// Without key, cert holds both, as keystoneauth accepts.
		keyFile := d.Key
		if keyFile == "" {
			keyFile = d.Cert
		}
		pair, err := tls.LoadX509KeyPair(expandHome(d.Cert), expandHome(keyFile))
		if err != nil {
			return nil, e.errorf("cert", "client certificate: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case d.Key != "":
		return nil, e.errorf("key", "set without cert")
	}
	return cfg, nil
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}

// HTTPClient is base (nil: a client without timeout) with the entry's
// TLS settings. A base whose transport is not an *http.Transport cannot
// take them, and is an error when the entry has any.
func (e *Entry) HTTPClient(base *http.Client) (*http.Client, error) {
	c := http.Client{}
	if base != nil {
		c = *base
	}
	if e.tls == nil {
		return &c, nil
	}
	var tr *http.Transport
	switch t := c.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return nil, fmt.Errorf("clouds.yaml: clouds.%s: TLS settings cannot be applied to an HTTP transport %T", e.Cloud, c.Transport)
	}
	tr.TLSClientConfig = e.tls.Clone()
	c.Transport = tr
	return &c, nil
}

// EndpointOpts are the entry's region and interface, for the catalog.
func (e *Entry) EndpointOpts() gophercloud.EndpointOpts {
	eo := gophercloud.EndpointOpts{Region: e.doc.RegionName, Availability: gophercloud.AvailabilityPublic}
	switch strings.TrimSuffix(coalesce(e.doc.Interface, e.doc.EndpointType), "URL") {
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	}
	return eo
}

// ServiceClient returns a client of service (a catalog service type:
// "baremetal", "placement", "compute") sending its requests through hc,
// which should come from HTTPClient. With Keystone it authenticates now
// (and again when the token expires) and takes the endpoint from the
// catalog unless the entry overrides it; without, the override is the
// endpoint and is required.
func (e *Entry) ServiceClient(ctx context.Context, hc *http.Client, service string) (*gophercloud.ServiceClient, error) {
	if err := e.CheckService(service); err != nil {
		return nil, err
	}
	endpoint, _ := e.endpointOverride(service)
	pc := &gophercloud.ProviderClient{HTTPClient: *hc}
	switch e.AuthType {
	case AuthNone, AuthHTTPBasic:
	case AuthAdmin:
		pc.SetToken(e.doc.Auth.Token)
	default:
		var err error
		if pc, err = e.authenticate(ctx, hc); err != nil {
			return nil, err
		}
		if endpoint == "" {
			eo := e.EndpointOpts()
			eo.ApplyDefaults(service)
			if endpoint, err = pc.EndpointLocator(eo); err != nil {
				return nil, fmt.Errorf("%s: clouds.%s: %s endpoint from Keystone's catalog (region %q, interface %s): %w",
					e.File, e.Cloud, service, eo.Region, eo.Availability, err)
			}
		}
	}
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(endpoint),
		// Type makes gophercloud send the service's microversion header.
		Type: service}
	if service == "baremetal" && !strings.HasSuffix(strings.TrimSuffix(sc.Endpoint, "/"), "/v1") {
		// Ironic's catalog endpoint is its root; the API is under /v1.
		sc.ResourceBase = sc.Endpoint + "v1/"
	}
	if e.AuthType == AuthHTTPBasic {
		a := e.doc.Auth
		sc.MoreHeaders = map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(a.Username+":"+a.Password))}
	}
	return sc, nil
}

// CheckService checks, without a network, that the entry can give a
// client of service (as ServiceClient): its endpoint override is a URL,
// and is set when there is no Keystone catalog to name the endpoint.
// Its errors are *Error.
func (e *Entry) CheckService(service string) error {
	endpoint, key := e.endpointOverride(service)
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &Error{Err: e.errorf(key, "invalid URL %q (want http:// or https://)", endpoint)}
		}
	}
	switch e.AuthType {
	case AuthNone, AuthHTTPBasic, AuthAdmin:
		if endpoint == "" {
			sk := strings.ReplaceAll(service, "-", "_")
			return &Error{Err: e.errorf("", "auth_type %s needs the %s endpoint: set %s_endpoint_override, endpoint_override or auth.endpoint", e.AuthType, service, sk)}
		}
	}
	return nil
}

// authenticate gets a Keystone token for the entry's credentials.
func (e *Entry) authenticate(ctx context.Context, hc *http.Client) (*gophercloud.ProviderClient, error) {
	a := e.doc.Auth
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: a.AuthURL,
		Username:         a.Username, UserID: a.UserID, Password: a.Password,
		DomainID:   coalesce(a.UserDomainID, a.DomainID),
		DomainName: coalesce(a.UserDomainName, a.DomainName),
	}
	switch e.AuthType {
	case AuthToken:
		// A token names its user; Keystone refuses user fields with it.
		ao = gophercloud.AuthOptions{IdentityEndpoint: a.AuthURL, TokenID: a.Token, Scope: e.scope()}
	case AuthAppCred:
		ao.ApplicationCredentialID, ao.ApplicationCredentialName = a.ApplicationCredentialID, a.ApplicationCredentialName
		ao.ApplicationCredentialSecret = a.ApplicationCredentialSecret
		ao.AllowReauth = true
	default:
		ao.Scope = e.scope()
		ao.AllowReauth = true
	}
	pc, err := openstack.NewClient(a.AuthURL)
	if err != nil {
		return nil, e.errorf("auth.auth_url", "%v", err)
	}
	pc.HTTPClient = *hc
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		return nil, fmt.Errorf("%s: clouds.%s: authenticate with Keystone at %s: %w", e.File, e.Cloud, a.AuthURL, err)
	}
	return pc, nil
}

// scope is the token's scope: the system, a project, or a domain.
func (e *Entry) scope() *gophercloud.AuthScope {
	a := e.doc.Auth
	switch {
	case a.SystemScope == "all":
		return &gophercloud.AuthScope{System: true}
	case a.ProjectID != "":
		return &gophercloud.AuthScope{ProjectID: a.ProjectID}
	case a.ProjectName != "":
		return &gophercloud.AuthScope{ProjectName: a.ProjectName,
			DomainID: coalesce(a.ProjectDomainID, a.DomainID), DomainName: coalesce(a.ProjectDomainName, a.DomainName)}
	case a.DomainID != "" || a.DomainName != "":
		return &gophercloud.AuthScope{DomainID: a.DomainID, DomainName: a.DomainName}
	}
	return nil
}

func coalesce(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
