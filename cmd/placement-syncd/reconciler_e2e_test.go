package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// recEnv is our Placement server (in this process) behind a counting
// proxy, and a directory for the binary's config, Nova file and state.
type recEnv struct {
	srv   *placementtest.Server
	proxy *placementtest.Proxy
	dir   string
}

func newRecEnv(t *testing.T) *recEnv {
	t.Helper()
	srv := placementtest.StartOurs(t, placementtest.Options{})
	return &recEnv{srv: srv, proxy: placementtest.NewProxy(t, srv.URL), dir: t.TempDir()}
}

// provider creates a compute node provider directly on the server.
func (e *recEnv) provider(t *testing.T, uuid, name string) {
	t.Helper()
	e.srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"uuid": uuid, "name": name})
	e.srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+uuid+"/traits", "1.39",
		map[string]any{"resource_provider_generation": 0, "traits": []string{"COMPUTE_NODE"}})
}

// aggregates reads a provider's aggregates directly, sorted.
func (e *recEnv) aggregates(t *testing.T, uuid string) []string {
	t.Helper()
	var doc struct {
		Aggregates []string `json:"aggregates"`
	}
	if err := json.Unmarshal(e.srv.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+uuid+"/aggregates", "1.39", nil), &doc); err != nil {
		t.Fatal(err)
	}
	slices.Sort(doc.Aggregates)
	return doc.Aggregates
}

// novaHost is a Nova host with one compute node.
type novaHost struct{ host, node string }

// writeNova writes the Nova file: the answers of GET /os-aggregates and
// GET /os-hypervisors/detail (2.53) merged.
func (e *recEnv) writeNova(t *testing.T, aggs map[string][]string, hosts ...novaHost) string {
	t.Helper()
	var doc struct {
		Aggregates  []map[string]any `json:"aggregates"`
		Hypervisors []map[string]any `json:"hypervisors"`
		Services    []map[string]any `json:"services"`
	}
	names := make([]string, 0, len(aggs))
	for u := range aggs {
		names = append(names, u)
	}
	slices.Sort(names)
	for i, u := range names {
		doc.Aggregates = append(doc.Aggregates, map[string]any{"id": i + 1, "uuid": u, "name": fmt.Sprintf("agg%d", i), "hosts": aggs[u]})
	}
	for _, h := range hosts {
		doc.Hypervisors = append(doc.Hypervisors, map[string]any{"id": h.node, "hypervisor_hostname": h.host, "service": map[string]any{"host": h.host}})
		doc.Services = append(doc.Services, map[string]any{"binary": "nova-compute", "host": h.host, "forced_down": false})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "nova.json")
	writeFile(t, path, string(b))
	return path
}

// config writes a config file whose reconciler section uses the proxy
// as Placement, plus extra lines (indented under reconciler:).
func (e *recEnv) config(t *testing.T, name string, extra ...string) string {
	t.Helper()
	body := fmt.Sprintf("reconciler:\n  state_file: %s\n  placement:\n    url: %s\n    token: admin\n",
		filepath.Join(e.dir, "state.json"), e.proxy.URL)
	for _, l := range extra {
		body += "  " + l + "\n"
	}
	path := filepath.Join(e.dir, name)
	writeFile(t, path, body)
	return path
}

func wantOutput(t *testing.T, r daemontest.Result, code int, stdout, stderr []string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
	for _, w := range stdout {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("stdout does not contain %q:\n%s", w, r.Stdout)
		}
	}
	for _, w := range stderr {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr does not contain %q:\n%s", w, r.Stderr)
		}
	}
}

// TestE2E_SyncAggregates runs the built binary's sync-aggregates through
// each documented exit code.
func TestE2E_SyncAggregates(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t)
	const (
		agg   = "a0a0a0a0-0000-4000-8000-000000000001"
		h1    = "b0b0b0b0-0000-4000-8000-000000000001"
		h2    = "b0b0b0b0-0000-4000-8000-000000000002"
		ghost = "b0b0b0b0-0000-4000-8000-000000000009"
	)
	e.provider(t, h1, "h1")
	e.provider(t, h2, "h2")
	hosts := []novaHost{{"h1", h1}, {"h2", h2}}
	novaPath := e.writeNova(t, map[string][]string{agg: {"h1", "h2"}}, hosts...)
	cfg := e.config(t, "file.yaml", "nova:", "  file: "+novaPath)
	statePath := filepath.Join(e.dir, "state.json")

	t.Run("dry run prints the plan and writes nothing", func(t *testing.T) {
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg, "--dry-run")
		wantOutput(t, r, exitOK, []string{
			"plan: host h1: provider " + h1 + ": add [" + agg + "] remove []",
			"plan: host h2: provider " + h2 + ": add [" + agg + "] remove []",
			"0 providers in sync, 2 to change, 2 associations drifted, 0 written",
		}, nil)
		if e.proxy.Writes() != 0 || len(e.aggregates(t, h1)) != 0 {
			t.Errorf("dry run: %d writes, h1 aggregates %v", e.proxy.Writes(), e.aggregates(t, h1))
		}
		if _, err := os.Stat(statePath); !os.IsNotExist(err) {
			t.Errorf("dry run wrote the state file (%v)", err)
		}
	})
	t.Run("sync prints the changes per host: exit 0", func(t *testing.T) {
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg)
		wantOutput(t, r, exitOK, []string{
			"synced: host h1: provider " + h1 + ": added [" + agg + "] removed []",
			"synced: host h2: provider " + h2 + ": added [" + agg + "] removed []",
			"2 written, 0 conflicts, 0 hosts without provider",
		}, nil)
		if got := e.proxy.Counts()[http.MethodPut]; got != 2 {
			t.Errorf("%d PUTs, want 2", got)
		}
		for _, p := range []string{h1, h2} {
			if got := e.aggregates(t, p); !slices.Equal(got, []string{agg}) {
				t.Errorf("provider %s: aggregates %v", p, got)
			}
		}
		if _, err := os.Stat(statePath); err != nil {
			t.Errorf("state file: %v", err)
		}
	})
	t.Run("in sync: exit 0, no write", func(t *testing.T) {
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg, "--verbose")
		wantOutput(t, r, exitOK, []string{"read placement memberships by-aggregate", "2 providers in sync, 0 to change, 0 associations drifted, 0 written"}, nil)
		if e.proxy.Writes() != 0 {
			t.Errorf("%d writes when in sync", e.proxy.Writes())
		}
	})
	t.Run("host without provider: exit 6, the others synced", func(t *testing.T) {
		e.writeNova(t, map[string][]string{agg: {"h1", "h2", "ghost"}}, append(hosts, novaHost{"ghost", ghost})...)
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg)
		wantOutput(t, r, exitUnmappedHosts,
			[]string{"no provider: host ghost: no resource provider for compute node(s) [" + ghost + "] (aggregates [" + agg + "])", "2 providers in sync"},
			[]string{"1 host(s) without a resource provider"})
	})
	t.Run("Nova file unreadable: exit 4, nothing sent to Placement", func(t *testing.T) {
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", e.config(t, "nofile.yaml", "nova:", "  file: "+filepath.Join(e.dir, "absent.json")))
		wantOutput(t, r, exitNovaUnavailable, nil, []string{"nova unavailable", "absent.json"})
		if e.proxy.Total() != 0 {
			t.Errorf("%d Placement requests with Nova unreadable", e.proxy.Total())
		}
	})
	t.Run("Nova API down: exit 4", func(t *testing.T) {
		nova := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "nova is down (test double)", http.StatusServiceUnavailable)
		}))
		defer nova.Close()
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", e.config(t, "novaapi.yaml", "nova:", "  endpoint: "+nova.URL, "  token: t"))
		wantOutput(t, r, exitNovaUnavailable, nil, []string{"nova unavailable: list aggregates"})
		if e.proxy.Total() != 0 {
			t.Errorf("%d Placement requests with Nova down", e.proxy.Total())
		}
	})
	t.Run("Placement failing: exit 5", func(t *testing.T) {
		e.proxy.SetMode(placementtest.Unavailable)
		defer e.proxy.SetMode(placementtest.Pass)
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg)
		wantOutput(t, r, exitPlacementError, nil, []string{"placement error"})
	})
	t.Run("Nova down wins over hosts without provider", func(t *testing.T) {
		e.proxy.SetMode(placementtest.Unavailable)
		defer e.proxy.SetMode(placementtest.Pass)
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", e.config(t, "nofile2.yaml", "nova:", "  file: "+filepath.Join(e.dir, "absent.json")))
		wantOutput(t, r, exitNovaUnavailable, nil, nil)
	})
	t.Run("no Nova source: usage error", func(t *testing.T) {
		r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", e.config(t, "nonova.yaml"))
		wantOutput(t, r, exitUsage, nil, []string{"no Nova source configured"})
	})
}

// TestE2E_GateOffline: without a running reconciler, gate decides from
// the state file and the configured service records.
func TestE2E_GateOffline(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t)
	listen := "listen: " + freeAddr(t)
	r := syncd.Exec(t, e.dir, "gate", "--config", e.config(t, "none.yaml", listen))
	wantOutput(t, r, exitOK, []string{"OWNER_NOVA gate: closed", "reason: Nova's list of nova-compute services not read yet",
		"required version: 73, minimum reported: 0, computes counted: 0, override: auto", "source: state file"}, nil)

	// Offline, the command reads Nova's list itself (here the file's
	// os-services): c1 and c2, c2 decommissioned by the operator.
	novaPath := e.writeNova(t, nil, novaHost{"c1", "c0c0c0c0-0000-4000-8000-000000000001"}, novaHost{"c2", "c0c0c0c0-0000-4000-8000-000000000002"})
	cfg := e.config(t, "services.yaml", listen, "nova:", "  file: "+novaPath, "gate:", "  services:",
		"    - {host: c1, binary: nova-compute, version: 73}", "    - {host: c2, binary: nova-compute, version: 72, deleted: true}")
	r = syncd.Exec(t, e.dir, "gate", "--config", cfg)
	wantOutput(t, r, exitOK, []string{"OWNER_NOVA gate: open", "computes counted: 1"}, nil)
	r = syncd.Exec(t, e.dir, "gate", "--config", cfg, "--json")
	var g reconciler.GateState
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil || !g.Open || g.MinVersion != 73 || g.Computes != 1 {
		t.Errorf("gate --json: %v %+v\n%s", err, g, r.Stdout)
	}
	r = syncd.Exec(t, e.dir, "gate", "--config", e.config(t, "closed.yaml", listen, "gate:", "  override: closed",
		"  services: [{host: c1, binary: nova-compute, version: 73}]"))
	wantOutput(t, r, exitOK, []string{"OWNER_NOVA gate: closed", "reason: closed by the operator (override: closed)"}, nil)
}

// TestE2E_ServeReconcilerJobs runs serve with the reconciler and drives
// it with jobs, gate and heartbeats from other processes.
func TestE2E_ServeReconcilerJobs(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t)
	const (
		agg = "a1a1a1a1-0000-4000-8000-000000000001"
		h1  = "b1b1b1b1-0000-4000-8000-000000000001"
	)
	e.provider(t, h1, "h1")
	novaPath := e.writeNova(t, map[string][]string{agg: {"h1"}}, novaHost{"h1", h1})
	serveCfg := filepath.Join(e.dir, "serve.yaml")
	writeFile(t, serveCfg, fmt.Sprintf(`api:
  listen: "127.0.0.1:0"
  shutdown_grace: 5s
database:
  path: %s
log:
  level: info
reconciler:
  enabled: true
  listen: "127.0.0.1:0"
  token: s3cret
  state_file: %s
  placement:
    url: %s
    token: admin
  nova:
    file: %s
  jobs:
    aggregates: "@every 1h"
    owner_traits: "@every 1h"
`, filepath.Join(e.dir, "p.db"), filepath.Join(e.dir, "state.json"), e.proxy.URL, novaPath))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := syncd.Start(t, daemontest.Options{Dir: e.dir, Args: []string{"serve", "--config", serveCfg}, Ready: "reconciler endpoint"})
	log := d.Log
	addr := strings.TrimPrefix(d.URL, "http://")
	log.Wait(t, ctx, "job run", map[string]string{"job": reconciler.JobAggregates, "trigger": reconciler.TriggerStart})
	log.Wait(t, ctx, "job run", map[string]string{"job": reconciler.JobOwnerTraits, "trigger": reconciler.TriggerStart})
	if got := e.aggregates(t, h1); !slices.Equal(got, []string{agg}) {
		t.Fatalf("h1 aggregates after the start run: %v", got)
	}
	client := filepath.Join(e.dir, "client.yaml")
	writeFile(t, client, fmt.Sprintf("reconciler:\n  listen: %q\n  token: s3cret\n", addr))

	r := syncd.Exec(t, e.dir, "jobs", "--config", client, "list")
	wantOutput(t, r, exitOK, []string{"aggregates (@every 1h):", "owner_traits (@every 1h):",
		" start    ok ", "changes=1 drift=1 conflicts=0 give_ups=0 hosts_without_provider=0 0 providers in sync, 1 written"}, nil)

	r = syncd.Exec(t, e.dir, "jobs", "--config", client, "run", reconciler.JobAggregates)
	var rec reconciler.RunRecord
	if err := json.Unmarshal([]byte(r.Stdout), &rec); r.Code != exitOK || err != nil ||
		rec.Trigger != reconciler.TriggerDemand || rec.Result != reconciler.ResultOK || rec.Changes != 0 || rec.Drift != 0 {
		t.Errorf("jobs run: exit %d, %+v (%v)\n%s%s", r.Code, rec, err, r.Stdout, r.Stderr)
	}
	wantOutput(t, syncd.Exec(t, e.dir, "jobs", "--config", client, "run", "nope"), exitFailure, nil, []string{"404", `unknown job "nope"`})
	wantOutput(t, syncd.Exec(t, e.dir, "jobs", "--config", client, "frobnicate"), exitUsage, nil, []string{"want 'list' or 'run JOB'"})
	writeFile(t, filepath.Join(e.dir, "badtoken.yaml"), fmt.Sprintf("reconciler:\n  listen: %q\n  token: wrong\n", addr))
	wantOutput(t, syncd.Exec(t, e.dir, "jobs", "--config", "badtoken.yaml", "list"), exitFailure, nil, []string{"401 a valid token is required"})

	t.Run("a run requested while one is going gets 409", func(t *testing.T) {
		entered, release := make(chan struct{}, 10), make(chan struct{})
		var once sync.Once
		unblock := func() { once.Do(func() { close(release) }) }
		defer unblock()
		e.proxy.SetBefore(func(r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/resource_providers" {
				entered <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		})
		defer e.proxy.SetBefore(nil)
		first := make(chan daemontest.Result, 1)
		go func() {
			r, err := syncd.ExecContext(ctx, e.dir, "jobs", "--config", client, "run", reconciler.JobAggregates)
			if err != nil {
				r = daemontest.Result{Code: -1, Stderr: err.Error()}
			}
			first <- r
		}()
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("the first run never reached Placement")
		}
		wantOutput(t, syncd.Exec(t, e.dir, "jobs", "--config", client, "run", reconciler.JobAggregates), exitFailure, nil,
			[]string{"409 job is already running"})
		unblock()
		wantOutput(t, <-first, exitOK, []string{`"trigger": "demand"`, `"result": "ok"`}, nil)
	})

	t.Run("a failed run: exit 1, listed with its error", func(t *testing.T) {
		e.proxy.SetMode(placementtest.Unavailable)
		r := syncd.Exec(t, e.dir, "jobs", "--config", client, "run", reconciler.JobAggregates)
		e.proxy.SetMode(placementtest.Pass)
		wantOutput(t, r, exitFailure, []string{`"result": "error"`}, []string{"job aggregates: placement error"})
		wantOutput(t, syncd.Exec(t, e.dir, "jobs", "--config", client, "list"), exitOK,
			[]string{" demand   error ", " error: placement error: "}, nil)
	})

	t.Run("gate from the running reconciler follows heartbeats", func(t *testing.T) {
		wantOutput(t, syncd.Exec(t, e.dir, "gate", "--config", client), exitOK,
			[]string{"OWNER_NOVA gate: closed", "source: reconciler at " + addr}, nil)
		d.Client(d.URL, "s3cret").MustDo(t, http.StatusNoContent, http.MethodPost, "/v1/services",
			`{"host":"h1","binary":"nova-compute","version":73}`)
		wantOutput(t, syncd.Exec(t, e.dir, "gate", "--config", client), exitOK,
			[]string{"OWNER_NOVA gate: open", "computes counted: 1"}, nil)
		// Opening the gate runs the stamping at once (trigger gate); the
		// pre-filter turns on after it.
		log.Wait(t, ctx, "job run", map[string]string{"job": reconciler.JobOwnerTraits, "trigger": reconciler.TriggerGate})
		if _, traits := e.srv.Traits(t, h1); !slices.Contains(traits, reconciler.TraitOwnerNova) {
			t.Errorf("h1 traits after stamping: %v", traits)
		}
		wantOutput(t, syncd.Exec(t, e.dir, "gate", "--config", client), exitOK, []string{"pre-filter on: true"}, nil)
		r := syncd.Exec(t, e.dir, "jobs", "--config", client, "run", reconciler.JobOwnerTraits)
		wantOutput(t, r, exitOK, []string{`"changes": 0`}, nil)
	})

	if code := d.Stop(t); code != 0 {
		t.Fatalf("serve after SIGTERM: exit %d\n%s", code, log)
	}
}
