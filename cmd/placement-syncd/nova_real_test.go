package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/novatest"
)

// realNova is the binary's real nova-api, started on first use.
var realNova = novatest.Shared()

// TestE2E_SyncAggregatesRealNova runs sync-aggregates against the real
// nova-api (max_limit 3, so hypervisors take several pages; one Ironic
// host with three nodes): the providers get the aggregates Nova gives
// their hosts, --verbose says what was read and what is in sync, and a
// host that left its last aggregate is printed with its host. A 300 (the
// endpoint without /v2.1) or a 204 (noauth2 without a token) exits 4,
// with a fresh state file as with a used one.
func TestE2E_SyncAggregatesRealNova(t *testing.T) {
	ctx := context.Background()
	n := realNova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	nodes, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "h1", Version: 73}, novatest.Compute{Cell: "cell1", Host: "h2", Version: 73},
		novatest.Compute{Cell: "cell1", Host: "h3", Version: 73}, novatest.Compute{Cell: "cell2", Host: "h4", Version: 73},
		novatest.Compute{Cell: "cell2", Host: "ironic", Version: 73, Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	e := newRecEnv(t)
	for host, uuids := range nodes {
		for _, u := range uuids {
			e.provider(t, u, host+"-"+u[:8]+u[len(u)-2:])
		}
	}
	aggA, err := n.CreateAggregate(ctx, "rack-a")
	if err != nil {
		t.Fatal(err)
	}
	aggB, err := n.CreateAggregate(ctx, "rack-b")
	if err != nil {
		t.Fatal(err)
	}
	for _, add := range []struct {
		agg  int
		host string
	}{{aggA.ID, "h1"}, {aggA.ID, "h2"}, {aggA.ID, "ironic"}, {aggB.ID, "h4"}} {
		if err := n.AddHost(ctx, add.agg, add.host); err != nil {
			t.Fatal(err)
		}
	}
	cfg := e.config(t, "nova.yaml", "nova:", "  endpoint: "+n.Endpoint, "  token: "+novatest.Token)

	r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg, "--verbose")
	wantOutput(t, r, exitOK, []string{"read Nova: 2 aggregates, 7 compute nodes on 5 hosts", "6 written"}, nil)
	for host, want := range map[string][]string{"h1": {aggA.UUID}, "h2": {aggA.UUID}, "h3": nil, "h4": {aggB.UUID}, "ironic": {aggA.UUID}} {
		for _, u := range nodes[host] {
			if got := e.aggregates(t, u); !slices.Equal(got, want) {
				t.Errorf("host %s provider %s: aggregates %v, want %v", host, u, got, want)
			}
		}
	}
	r = syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg, "--verbose")
	wantOutput(t, r, exitOK, []string{fmt.Sprintf("in sync: host h4: provider %s: aggregates [%s]", nodes["h4"][0], aggB.UUID), "6 providers in sync"}, nil)

	if err := n.RemoveHost(ctx, aggB.ID, "h4"); err != nil {
		t.Fatal(err)
	}
	r = syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg)
	wantOutput(t, r, exitOK, []string{fmt.Sprintf("synced: host h4: provider %s: added [] removed [%s]", nodes["h4"][0], aggB.UUID)}, nil)
	if strings.Contains(r.Stdout, "(no Nova host)") {
		t.Errorf("a provider printed without its host:\n%s", r.Stdout)
	}

	for _, c := range []struct{ name, endpoint, token, want string }{
		{"300: endpoint without /v2.1", n.Root, novatest.Token, "answered 300"},
		{"204: no token", n.Endpoint, "", "answered 204"},
	} {
		for _, fresh := range []bool{false, true} {
			if fresh {
				if err := os.Remove(filepath.Join(e.dir, "state.json")); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			bad := e.config(t, "bad.yaml", "nova:", "  endpoint: "+c.endpoint, fmt.Sprintf("  token: %q", c.token))
			r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", bad)
			if r.Code != exitNovaUnavailable || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("%s (fresh state %v): exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.name, fresh, r.Code, exitNovaUnavailable, c.want, r.Stdout, r.Stderr)
			}
		}
	}
}

// TestE2E_CellDSNNovaForm: a cell database in Nova's own URL form is
// accepted; a bad one is an error naming file, line and key.
func TestE2E_CellDSNNovaForm(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "reconciler:\n  nova:\n    cell_databases:\n      - name: cell1\n        dsn: mysql+pymysql://nova_ro:s3cret@db1:3306/nova_cell1?charset=utf8\n"+
		"    api_database: mysql://nova_ro:s3cret@db1/nova_api\n")
	if _, err := loadConfig(good, nil); err != nil {
		t.Errorf("Nova's URL form refused: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "reconciler:\n  nova:\n    cell_databases:\n      - name: cell1\n        dsn: mysql+pymysql://nova_ro:s3cret@db1:3306/nova_cell1\n"+
		"      - name: cell2\n        dsn: postgresql://nova@db2/nova_cell2\n")
	_, err := loadConfig(bad, nil)
	if err == nil || !strings.Contains(err.Error(), bad+":7: reconciler.nova.cell_databases.1.dsn:") {
		t.Errorf("bad cell DSN: %v, want an error at %s:7 naming reconciler.nova.cell_databases.1.dsn", err, bad)
	}
}

// TestE2E_GateOfflineRealNova: the offline gate command reads the cells
// from the real API database's cell_mappings: open with every compute at
// 73, closed naming the cell once cell2 is unreadable, as the daemon.
func TestE2E_GateOfflineRealNova(t *testing.T) {
	ctx := context.Background()
	n := realNova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "g1", Version: 73}, novatest.Compute{Cell: "cell2", Host: "g2", Version: 73}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gate.yaml")
	writeFile(t, cfg, fmt.Sprintf("reconciler:\n  listen: %s\n  state_file: %s\n  nova:\n    api_database: %q\n",
		freeAddr(t), filepath.Join(dir, "state.json"), n.APIDatabase))
	r := syncd.Exec(t, dir, "gate", "--config", cfg)
	wantOutput(t, r, exitOK, []string{"OWNER_NOVA gate: open", "all 2 nova-compute services at version 73"}, nil)
	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Readable(ctx, "cell2") })
	r = syncd.Exec(t, dir, "gate", "--config", cfg)
	wantOutput(t, r, exitOK, []string{"OWNER_NOVA gate: closed", "could not be read", "cell cell2: Error 1044"}, nil)
}
