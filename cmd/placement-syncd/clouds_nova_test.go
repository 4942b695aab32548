package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/harness/keystonetest"
	"github.com/placement-syncd/placement-syncd/internal/harness/novatest"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// novaTLSDouble is a compute API double that records what reaches it (the
// path and the token of each request): the real nova-api here serves
// plain HTTP only, and these are TLS tests.
type novaTLSDouble struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (n *novaTLSDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.seen = append(n.seen, r.Clone(context.Background()))
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"aggregates": [], "hypervisors": [], "services": []}`))
}

func (n *novaTLSDouble) first(t *testing.T) *http.Request {
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
	rec := &novaTLSDouble{}
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
		nova, err := assemble.NovaSource(ctx, config.NovaConfig{Cloud: cloud})
		if err != nil {
			t.Fatalf("%s: %v", cloud, err)
		}
		_, _ = nova.NovaState(ctx) // what Nova answers is not this test's concern
		if r := rec.first(t); r.URL.Path != "/compute/v2.1/os-aggregates" || r.Header.Get("X-Auth-Token") != "admin" {
			t.Errorf("%s: %s with token %q", cloud, r.URL.Path, r.Header.Get("X-Auth-Token"))
		}
	}
	nova, err := assemble.NovaSource(ctx, config.NovaConfig{Cloud: "plain"})
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
		if _, err := assemble.NovaSource(ctx, config.NovaConfig{Cloud: cloud}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", cloud, err, want)
		}
	}
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
	computes, err := assemble.ComputeSource(ctx, config.ReconcilerConfig{Nova: config.NovaConfig{Cloud: "nova"}})
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

func computeHosts(cs []reconciler.ComputeService) []string {
	var hosts []string
	for _, c := range cs {
		hosts = append(hosts, c.Host)
	}
	slices.Sort(hosts)
	return hosts
}
