package ironic_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
)

// headerProxy fronts the real Ironic and records the auth headers of the
// requests it forwards.
type headerProxy struct {
	next http.Handler
	mu   sync.Mutex
	seen []http.Header
}

func (p *headerProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.Header.Clone())
	p.mu.Unlock()
	p.next.ServeHTTP(w, r)
}

func (p *headerProxy) last(t *testing.T) http.Header {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) == 0 {
		t.Fatal("no request reached Ironic")
	}
	return p.seen[len(p.seen)-1]
}

// ironicProxy starts a proxy to the real Ironic's root, over TLS when
// tls is set; it returns the proxy and its URL.
func ironicProxy(t *testing.T, tls bool) (*headerProxy, *httptest.Server) {
	ir := realIronic.Get(t)
	root, _ := url.Parse(strings.TrimSuffix(ir.URL, "/v1"))
	p := &headerProxy{next: httputil.NewSingleHostReverseProxy(root)}
	srv := httptest.NewUnstartedServer(p)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return p, srv
}

func writeClouds(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func observeCloud(t *testing.T, path, cloud string) error {
	t.Helper()
	d, err := ironic.New(context.Background(), ironic.Options{Cloud: cloud, CloudsFile: path})
	if err != nil {
		return err
	}
	_, err = d.Observe(context.Background())
	return err
}

// TestCloudsStandalone: a standalone Ironic described as openstacksdk
// describes it (auth_type none or http_basic, an endpoint override with
// or without /v1) is read, TLS included (cacert, verify: false); a
// clouds.yaml entry without auth: is an error naming file and key.
func TestCloudsStandalone(t *testing.T) {
	p, srv := ironicProxy(t, true)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeClouds(t, `clouds:
  none: {auth_type: none, baremetal_endpoint_override: `+srv.URL+`, cacert: `+ca+`}
  v1: {auth_type: none, baremetal_endpoint_override: `+srv.URL+`/v1, verify: false}
  basic:
    auth_type: http_basic
    auth: {username: ironic, password: s3cret}
    endpoint_override: `+srv.URL+`
    cacert: `+ca+`
  untrusted: {auth_type: none, baremetal_endpoint_override: `+srv.URL+`}
  bare:
    region_name: RegionOne
  nowhere: {auth_type: none}
`)
	for _, cloud := range []string{"none", "v1", "basic"} {
		if err := observeCloud(t, path, cloud); err != nil {
			t.Errorf("%s: %v", cloud, err)
		}
	}
	if h := p.last(t); h.Get("Authorization") != "Basic aXJvbmljOnMzY3JldA==" || h.Get("X-OpenStack-Ironic-API-Version") != ironic.DefaultMicroversion {
		t.Errorf("http_basic: Authorization %q, microversion %q", h.Get("Authorization"), h.Get("X-OpenStack-Ironic-API-Version"))
	}
	for cloud, want := range map[string]string{
		"untrusted": "x509: certificate signed by unknown authority",
		"bare":      path + ":10: clouds.bare.auth: required with auth_type password",
		"nowhere":   path + ":12: clouds.nowhere: auth_type none needs the baremetal endpoint",
	} {
		if err := observeCloud(t, path, cloud); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", cloud, err, want)
		}
	}
}

// TestCloudsKeystone: a password entry authenticates with the real
// Keystone and finds Ironic in its region's catalog; Ironic receives a
// token Keystone accepts as the service user's.
func TestCloudsKeystone(t *testing.T) {
	ks := keystonetest.Start(t, keystonetest.Options{})
	p, srv := ironicProxy(t, false)
	region := ks.Catalog(t, map[string]string{"baremetal": srv.URL})
	path := writeClouds(t, "clouds:\n"+ks.CloudsEntry("ironic", region, keystonetest.ServiceAdmin, keystonetest.ProjectService))
	if err := observeCloud(t, path, "ironic"); err != nil {
		t.Fatal(err)
	}
	tok := p.last(t).Get("X-Auth-Token")
	req, _ := http.NewRequest(http.MethodGet, ks.AuthURL()+"/auth/tokens?nocatalog", nil)
	req.Header.Set("X-Auth-Token", ks.Token(t, keystonetest.Validator, keystonetest.Project(keystonetest.ProjectService)))
	req.Header.Set("X-Subject-Token", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the token Ironic received: Keystone says %s", resp.Status)
	}
}
