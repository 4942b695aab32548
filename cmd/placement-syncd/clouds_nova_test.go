package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
	"github.com/placement-syncd/placement-syncd/testkit/novatest"
)

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

// testNovaCloudsKeystone: the reconciler reaches the real nova-api,
// which validates Keystone tokens, through a clouds.yaml password entry
// whose compute endpoint is in the real Keystone's catalog:
// sync-aggregates gives the providers the aggregates Nova holds, and the
// gate's compute source lists Nova's services (a forced-down one left
// out). A user without admin is refused by Nova's policy (exit 4), and a
// noauth2 token is refused by Keystone's middleware.
func testNovaCloudsKeystone(t *testing.T, ks *keystonetest.Keystone) {
	ctx := t.Context()
	n := realNova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	nodes, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "k1", Version: 73},
		novatest.Compute{Cell: "cell2", Host: "k2", Version: 73}, novatest.Compute{Cell: "cell2", Host: "k3", Version: 73})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := n.CreateAggregate(ctx, "rack-k")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AddHost(ctx, agg.ID, "k2"); err != nil {
		t.Fatal(err)
	}
	if err := n.UpdateService(ctx, "k3", map[string]any{"forced_down": true}); err != nil {
		t.Fatal(err)
	}
	api := n.StartKeystoneAPI(t, ks)
	t.Logf("keystone-authed nova-api started in %s", api.StartUp.Round(time.Millisecond))
	region := ks.Catalog(t, map[string]string{"compute": api.Endpoint})
	novaClouds(t, "clouds:\n"+ks.CloudsEntry("nova", region, keystonetest.ServiceAdmin, keystonetest.ProjectService)+
		ks.CloudsEntry("member", region, keystonetest.DemoMember, keystonetest.ProjectDemo))

	e := newRecEnv(t)
	for host, uuids := range nodes {
		e.provider(t, uuids[0], host)
	}
	var stdout, stderr bytes.Buffer
	cfg := e.config(t, "nova.yaml", "nova: {cloud: nova}")
	if code := run(ctx, []string{"sync-aggregates", "--config", cfg, "--verbose"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("sync-aggregates: exit %d\n%s\nnova-api log:\n%s", code, stderr.String(), api.Log())
	}
	if !strings.Contains(stdout.String(), "read Nova: 1 aggregates, 3 compute nodes on 3 hosts") {
		t.Errorf("sync-aggregates did not read Nova's aggregate and computes:\n%s", stdout.String())
	}
	for host, want := range map[string][]string{"k1": nil, "k2": {agg.UUID}, "k3": nil} {
		if got := e.aggregates(t, nodes[host][0]); !slices.Equal(got, want) {
			t.Errorf("host %s: aggregates %v, want %v", host, got, want)
		}
	}
	computes, err := novaclient.OpenComputes(ctx, assemble.NovaSettings(config.NovaConfig{Cloud: "nova"}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := computes.Computes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hosts := computeHosts(got); !slices.Equal(hosts, []string{"k1", "k2"}) {
		t.Errorf("computes %v, want k1 and k2 (k3 is forced down)", got)
	}

	stdout.Reset()
	stderr.Reset()
	member := e.config(t, "member.yaml", "nova: {cloud: member}")
	if code := run(ctx, []string{"sync-aggregates", "--config", member}, &stdout, &stderr); code != exitNovaUnavailable || !strings.Contains(stderr.String(), "403") {
		t.Errorf("a member's token: exit %d, want %d with Nova's 403\n%s", code, exitNovaUnavailable, stderr.String())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api.Endpoint+"/os-services", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", novatest.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a noauth2 token: %s, want 401", resp.Status)
	}
}

func computeHosts(cs []novaclient.ComputeService) []string {
	var hosts []string
	for _, c := range cs {
		hosts = append(hosts, c.Host)
	}
	slices.Sort(hosts)
	return hosts
}
