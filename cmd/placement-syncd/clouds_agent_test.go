package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestCloudsKeystone: the agent's and the reconciler's clouds.yaml
// clients against one real Keystone, reaching the real Ironic and the
// real nova-api through its catalog.
func TestCloudsKeystone(t *testing.T) {
	ks := keystonetest.Start(t, keystonetest.Options{})
	t.Run("agent", func(t *testing.T) { testAgentCloudsKeystone(t, ks) })
	t.Run("nova", func(t *testing.T) { testNovaCloudsKeystone(t, ks) })
}

// testAgentCloudsKeystone: `agent --once` with one clouds.yaml entry
// (password auth against the real Keystone) finds Placement, which
// validates its token with that Keystone, and the real Ironic (noauth:
// it ignores the token) in the catalog, and reports Ironic's node.
func testAgentCloudsKeystone(t *testing.T, ks *keystonetest.Keystone) {
	pl := placementtest.StartOurs(t, placementtest.Options{Keystone: &placementtest.KeystoneAuth{AuthURL: ks.AuthURL(),
		Username: keystonetest.Validator, Password: keystonetest.Password, ProjectName: keystonetest.ProjectService}})
	// The only test of this binary on the real Ironic: it starts its own.
	ir := ironictest.Start(t, ironictest.Options{})
	t.Logf("real Ironic started in %s", ir.StartUp.Round(time.Millisecond))
	node := ir.EnrollAvailable(t, 1, ironictest.NodeSpec{Name: "clouds", ResourceClass: "baremetal-gold"})[0]
	region := ks.Catalog(t, map[string]string{"placement": pl.URL, "baremetal": strings.TrimSuffix(ir.URL, "/v1")})
	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	entry := ks.CloudsEntry("cloud", region, keystonetest.ServiceAdmin, keystonetest.ProjectService)
	if err := os.WriteFile(clouds, []byte("clouds:\n"+entry), 0o600); err != nil {
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
