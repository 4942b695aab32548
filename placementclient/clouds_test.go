package placementclient

import (
	"context"
	"encoding/pem"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

func writeClouds(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCloudsKeystone: a password entry authenticates with the real
// Keystone, finds our Placement (validating tokens with that Keystone)
// in the catalog, and its roles decide: the service user with admin
// lists providers, a reader of project demo is forbidden.
func TestCloudsKeystone(t *testing.T) {
	ks := keystonetest.Start(t, keystonetest.Options{})
	t.Logf("Keystone started in %s", ks.StartupTime)
	pl := placementtest.StartOurs(t, placementtest.Options{Keystone: &placementtest.KeystoneAuth{AuthURL: ks.AuthURL(),
		Username: keystonetest.Validator, Password: keystonetest.Password, ProjectName: keystonetest.ProjectService}})
	region := ks.Catalog(t, map[string]string{"placement": pl.URL})
	path := writeClouds(t, "clouds:\n"+ks.CloudsEntry("agent", region, keystonetest.ServiceAdmin, "service")+
		ks.CloudsEntry("reader", region, keystonetest.DemoReader, "demo"))
	ctx := context.Background()
	c, err := New(ctx, Options{Keystone: &KeystoneOptions{Cloud: "agent", CloudsFile: path}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != pl.URL+"/" {
		t.Errorf("endpoint %s, want the catalog's %s/", c.Endpoint(), pl.URL)
	}
	if _, err := c.CreateProvider(ctx, NewProvider{Name: "cloudsyaml-rp"}); err != nil {
		t.Fatalf("create as the service admin: %v", err)
	}
	if ps, err := c.ListProviders(ctx, ListFilter{}); err != nil || len(ps) != 1 {
		t.Fatalf("list as the service admin: %v %v", ps, err)
	}
	r, err := New(ctx, Options{Keystone: &KeystoneOptions{Cloud: "reader", CloudsFile: path}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateProvider(ctx, NewProvider{Name: "by-a-reader"}); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("create as a project reader: %v, want a 403", err)
	}
}

// TestCloudsTLS: our Placement behind a self-signed TLS endpoint is
// reached with cacert or verify: false, and refused without either.
func TestCloudsTLS(t *testing.T) {
	pl := placementtest.StartOurs(t, placementtest.Options{})
	u, _ := url.Parse(pl.URL)
	srv := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(u))
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	common := "{auth_type: admin_token, auth: {endpoint: " + srv.URL + ", token: admin}"
	path := writeClouds(t, "clouds:\n  plain: "+common+"}\n  cacert: "+common+", cacert: "+ca+"}\n  insecure: "+common+", verify: false}\n")
	ctx := context.Background()
	for cloud, wantErr := range map[string]string{"plain": "x509: certificate signed by unknown authority", "cacert": "", "insecure": ""} {
		c, err := New(ctx, Options{Keystone: &KeystoneOptions{Cloud: cloud, CloudsFile: path}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ListProviders(ctx, ListFilter{})
		if (wantErr == "" && err != nil) || (wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr))) {
			t.Errorf("%s: got %v, want %q", cloud, err, wantErr)
		}
	}
}

// TestCloudsWithoutAuth: an entry without auth: is a configuration
// error naming the file and the key, not a panic.
func TestCloudsWithoutAuth(t *testing.T) {
	path := writeClouds(t, "clouds:\n  standalone:\n    auth_type: none\n  bare:\n    region_name: r\n")
	for cloud, want := range map[string]string{
		"standalone": path + ":2: clouds.standalone: auth_type none needs the placement endpoint: set placement_endpoint_override",
		"bare":       path + ":4: clouds.bare.auth: required with auth_type password",
	} {
		_, err := New(context.Background(), Options{Keystone: &KeystoneOptions{Cloud: cloud, CloudsFile: path}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", cloud, err, want)
		}
	}
}
