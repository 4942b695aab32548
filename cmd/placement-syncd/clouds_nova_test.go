package main

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/internal/keystonetest"
)

// novaRecorder stands in for the compute API only to record what reaches
// it: the path and the token of each request.
type novaRecorder struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (n *novaRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.seen = append(n.seen, r.Clone(context.Background()))
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"aggregates": [], "hypervisors": [], "services": []}`))
}

func (n *novaRecorder) first(t *testing.T) *http.Request {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.seen) == 0 {
		t.Fatal("no request reached Nova")
	}
	r := n.seen[0]
	n.seen = nil
	return r
}

// novaClouds writes a clouds.yaml and points the usual search at it:
// reconciler.nova.cloud has no file of its own.
func novaClouds(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	return path
}

// TestNovaCloudsTLS: the reconciler's Nova client honours cacert and
// verify: false, refuses an untrusted server, and reports an entry
// without auth: or endpoint as a configuration error, not a panic.
func TestNovaCloudsTLS(t *testing.T) {
	rec := &novaRecorder{}
	srv := httptest.NewTLSServer(rec)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	common := "{auth_type: admin_token, auth: {token: admin, endpoint: " + srv.URL + "/compute/v2.1}"
	path := novaClouds(t, "clouds:\n  cacert: "+common+", cacert: "+ca+"}\n  insecure: "+common+", verify: false}\n  plain: "+common+"}\n"+
		"  bare: {region_name: r}\n  nowhere: {auth_type: none}\n")
	ctx := context.Background()
	for _, cloud := range []string{"cacert", "insecure"} {
		nova, err := novaSource(ctx, NovaConfig{Cloud: cloud})
		if err != nil {
			t.Fatalf("%s: %v", cloud, err)
		}
		_, _ = nova.NovaState(ctx) // what Nova answers is not this test's concern
		if r := rec.first(t); r.URL.Path != "/compute/v2.1/os-aggregates" || r.Header.Get("X-Auth-Token") != "admin" {
			t.Errorf("%s: %s with token %q", cloud, r.URL.Path, r.Header.Get("X-Auth-Token"))
		}
	}
	nova, err := novaSource(ctx, NovaConfig{Cloud: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nova.NovaState(ctx); err == nil || !strings.Contains(err.Error(), "x509: certificate signed by unknown authority") {
		t.Errorf("untrusted server: %v", err)
	}
	for cloud, want := range map[string]string{
		"bare":    path + ":5: clouds.bare.auth: required with auth_type password",
		"nowhere": path + ":6: clouds.nowhere: auth_type none needs the compute endpoint",
	} {
		if _, err := novaSource(ctx, NovaConfig{Cloud: cloud}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", cloud, err, want)
		}
	}
}

// testNovaCloudsKeystone: a password entry authenticates with the real
// Keystone and finds Nova in its region's catalog; Nova receives a token
// Keystone accepts.
func testNovaCloudsKeystone(t *testing.T, ks *keystonetest.Keystone) {
	rec := &novaRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	region := ks.Catalog(t, map[string]string{"compute": srv.URL + "/compute/v2.1"})
	novaClouds(t, `clouds:
  nova:
    region_name: `+region+`
    auth:
      auth_url: `+ks.AuthURL()+`
      username: `+keystonetest.ServiceAdmin+`
      password: `+keystonetest.Password+`
      project_name: service
      user_domain_name: Default
      project_domain_name: Default
`)
	ctx := context.Background()
	nova, err := novaSource(ctx, NovaConfig{Cloud: "nova"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = nova.NovaState(ctx)
	r := rec.first(t)
	if r.URL.Path != "/compute/v2.1/os-aggregates" {
		t.Errorf("reached %s, want the catalog's /compute/v2.1/os-aggregates", r.URL.Path)
	}
	req, _ := http.NewRequest(http.MethodGet, ks.AuthURL()+"/auth/tokens?nocatalog", nil)
	req.Header.Set("X-Auth-Token", ks.Token(t, keystonetest.Validator, keystonetest.Project(keystonetest.ProjectService)))
	req.Header.Set("X-Subject-Token", r.Header.Get("X-Auth-Token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the token Nova received: Keystone says %s", resp.Status)
	}
}
