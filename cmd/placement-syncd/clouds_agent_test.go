package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/internal/ironictest"
	"github.com/placement-syncd/placement-syncd/internal/keystonetest"
	"github.com/placement-syncd/placement-syncd/internal/placementtest"
)

// TestCloudsKeystone: the agent's and the reconciler's clouds.yaml
// clients against one real Keystone.
func TestCloudsKeystone(t *testing.T) {
	ks := keystonetest.Start(t, keystonetest.Options{})
	t.Run("agent", func(t *testing.T) { testAgentCloudsKeystone(t, ks) })
	t.Run("nova", func(t *testing.T) { testNovaCloudsKeystone(t, ks) })
}

// testAgentCloudsKeystone: `agent --once` with one clouds.yaml entry
// (password auth against the real Keystone) finds Placement, which
// validates its token with that Keystone, and Ironic in the catalog, and
// reports the node.
func testAgentCloudsKeystone(t *testing.T, ks *keystonetest.Keystone) {
	pl := placementtest.StartOurs(t, placementtest.Options{Keystone: &placementtest.KeystoneAuth{AuthURL: ks.AuthURL(),
		Username: keystonetest.Validator, Password: keystonetest.Password, ProjectName: keystonetest.ProjectService}})
	const node = "0b5c8f7e-3d2a-4e1f-9c6b-7a8d9e0f1a2b"
	ir := ironictest.NewIronicDouble(t, ironictest.Node{UUID: node, ResourceClass: "baremetal-gold",
		ProvisionState: "available", PowerState: "power off"})
	region := ks.Catalog(t, map[string]string{"placement": pl.URL, "baremetal": strings.TrimSuffix(ir.URL, "/v1")})
	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(clouds, []byte(`clouds:
  cloud:
    region_name: `+region+`
    auth:
      auth_url: `+ks.AuthURL()+`
      username: `+keystonetest.ServiceAdmin+`
      password: `+keystonetest.Password+`
      project_name: service
      user_domain_name: Default
      project_domain_name: Default
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(cfg, []byte(`log: {format: console}
agent:
  host: conductor-1
  state_file: `+filepath.Join(dir, "state.json")+`
  placement: {cloud: cloud, clouds_file: `+clouds+`}
  ironic: {enabled: true, cloud: cloud, clouds_file: `+clouds+`}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", cfg, "--once"}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	pl.Token = ks.Token(t, keystonetest.Admin, keystonetest.System)
	if _, invs := pl.Inventories(t, node); invs["CUSTOM_BAREMETAL_GOLD"]["total"] != 1 {
		t.Errorf("inventories of the node's provider: %v", invs)
	}
}
