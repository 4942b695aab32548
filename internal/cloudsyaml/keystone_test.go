package cloudsyaml

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

var ks *keystonetest.Keystone

func TestMain(m *testing.M) {
	os.Exit(svcproc.RunEager(m, keystonetest.Shared(keystonetest.Options{}), &ks))
}

// tokenScope asks the real Keystone who token belongs to and its scope.
func tokenScope(t *testing.T, token string) (user, project string, system bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ks.AuthURL()+"/auth/tokens?nocatalog", nil)
	req.Header.Set("X-Auth-Token", ks.Token(t, keystonetest.Validator, keystonetest.Project(keystonetest.ProjectService)))
	req.Header.Set("X-Subject-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Keystone refused the client's token: %s", resp.Status)
	}
	var doc struct {
		Token struct {
			User    struct{ Name string }
			Project *struct{ Name string }
			System  map[string]bool
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Token.Project != nil {
		project = doc.Token.Project.Name
	}
	return doc.Token.User.Name, project, doc.Token.System["all"]
}

// TestKeystoneAuth: password, system-scoped and token entries
// authenticate with the real Keystone and find each service in the
// catalog of their region; an override wins over the catalog.
func TestKeystoneAuth(t *testing.T) {
	rec := newRecorder()
	srv := httptest.NewServer(rec)
	defer srv.Close()
	region := ks.Catalog(t, map[string]string{
		"placement": srv.URL + "/placement", "baremetal": srv.URL + "/ironic", "compute": srv.URL + "/compute/v2.1"})
	auth := "\n    region_name: " + region + "\n    auth:\n      auth_url: " + ks.AuthURL() +
		"\n      user_domain_name: Default\n      project_domain_name: Default\n"
	path := writeClouds(t, "clouds:\n  project:"+auth+
		"      username: "+keystonetest.ServiceAdmin+"\n      password: "+keystonetest.Password+"\n      project_name: service\n"+
		"  system:"+auth+"      username: admin\n      password: "+keystonetest.Password+"\n      system_scope: all\n"+
		"  token:\n    auth_type: v3token"+auth+"      token: "+ks.Token(t, keystonetest.DemoMember, keystonetest.Project("demo"))+"\n      project_name: demo\n"+
		"  override:"+auth+"      username: "+keystonetest.ServiceAdmin+"\n      password: "+keystonetest.Password+"\n      project_name: service\n"+
		"    placement_endpoint_override: "+srv.URL+"/elsewhere\n"+
		"  wrong:"+auth+"      username: "+keystonetest.ServiceAdmin+"\n      password: wrong\n      project_name: service\n")
	for _, tc := range []struct {
		cloud, service, path, user, project string
		system                              bool
	}{
		{"project", "placement", "/placement/resource_providers", keystonetest.ServiceAdmin, "service", false},
		{"project", "baremetal", "/ironic/v1/resource_providers", keystonetest.ServiceAdmin, "service", false},
		{"project", "compute", "/compute/v2.1/resource_providers", keystonetest.ServiceAdmin, "service", false},
		{"system", "placement", "/placement/resource_providers", "admin", "", true},
		{"token", "compute", "/compute/v2.1/resource_providers", keystonetest.DemoMember, "demo", false},
		{"override", "placement", "/elsewhere/resource_providers", keystonetest.ServiceAdmin, "service", false},
	} {
		e, err := Read(Source{File: path, Cloud: tc.cloud})
		if err != nil {
			t.Fatal(err)
		}
		if err := get(t, e, tc.service, "resource_providers", nil); err != nil {
			t.Fatalf("%s %s: %v", tc.cloud, tc.service, err)
		}
		h := <-rec.hdr
		if h.Get("X-Path") != tc.path {
			t.Errorf("%s %s: reached %s, want %s", tc.cloud, tc.service, h.Get("X-Path"), tc.path)
		}
		user, project, system := tokenScope(t, h.Get("X-Auth-Token"))
		if user != tc.user || project != tc.project || system != tc.system {
			t.Errorf("%s: token of %s in %q (system %v), want %s in %q (system %v)", tc.cloud, user, project, system, tc.user, tc.project, tc.system)
		}
	}
	e, err := Read(Source{File: path, Cloud: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ServiceClient(context.Background(), http.DefaultClient, "placement")
	if err == nil || !strings.Contains(err.Error(), path+": clouds.wrong: authenticate with Keystone at "+ks.AuthURL()) {
		t.Errorf("wrong password: %v", err)
	}
	e, _ = Read(Source{File: path, Cloud: "project"})
	_, err = e.ServiceClient(context.Background(), http.DefaultClient, "volumev3")
	if err == nil || !strings.Contains(err.Error(), "volumev3 endpoint from Keystone's catalog (region \""+region) {
		t.Errorf("a service missing from the catalog: %v", err)
	}
}
