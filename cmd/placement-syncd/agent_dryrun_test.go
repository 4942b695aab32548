package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestAgentOnceDryRun: after a real pass, the providers file changes
// (inventories, a new provider with a custom trait); `agent --once
// --dry-run` against a real server prints each intended write, in a
// stable order, and writes nothing: no write reaches the server, and
// providers, generations and inventories stay as they were.
func TestAgentOnceDryRun(t *testing.T) {
	const cn1, cn2 = "7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01", "7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a02"
	srv := placementtest.StartOurs(t, placementtest.Options{})
	proxy := placementtest.NewProxy(t, srv.URL)
	dir := t.TempDir()
	providers := filepath.Join(dir, "providers.yaml")
	// writeProviders writes the static driver's file, one provider per
	// entry.
	writeProviders := func(entries ...string) {
		t.Helper()
		if err := os.WriteFile(providers, []byte("providers:\n"+strings.Join(entries, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	provider := func(uuid, name, traits string, invs ...string) string {
		return "  - {uuid: " + uuid + ", name: " + name + ", owner: OWNER_NOVA, traits: [" + traits + "],\n" +
			"     inventories: {" + strings.Join(invs, ", ") + "}}\n"
	}
	writeProviders(provider(cn1, "compute-1", "", "VCPU: {total: 16, allocation_ratio: 4.0}", "MEMORY_MB: {total: 4096, unavailable: maintenance}"))
	cfg := filepath.Join(dir, "agent.yaml")
	writeFile(t, cfg, "log: {format: console}\nagent:\n  host: h1\n  placement: {endpoint: \""+proxy.URL+"\", token: admin}\n  static: {enabled: true, file: \""+providers+"\"}\n")
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", cfg, "--once"}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("agent --once: exit %d: %s", code, stderr.String())
	}

	writeProviders(
		provider(cn1, "compute-1", "", "VCPU: {total: 32, allocation_ratio: 4.0}", "MEMORY_MB: {total: 4096}", "DISK_GB: {total: 100}"),
		provider(cn2, "compute-2", "CUSTOM_FAST", "VCPU: {total: 8}"))
	listBefore := srv.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers", "1.39", nil)
	genBefore, invsBefore := srv.Inventories(t, cn1)
	proxy.Reset()
	var stdout bytes.Buffer
	stderr.Reset()
	if code := run(t.Context(), []string{"agent", "--config", cfg, "--once", "--dry-run"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("agent --once --dry-run: exit %d: %s", code, stderr.String())
	}
	want := strings.Join([]string{
		`static: ensure trait CUSTOM_FAST`,
		`static: set inventories of "compute-1" (` + cn1 + `): DISK_GB total=100 reserved=0; MEMORY_MB total=4096 reserved=0; VCPU total=32 reserved=0 allocation_ratio=4`,
		`static: create provider "compute-2" (` + cn2 + `)`,
		`static: set traits of "compute-2" (` + cn2 + `): +CUSTOM_FAST +OWNER_NOVA`,
		`static: set inventories of "compute-2" (` + cn2 + `): VCPU total=8 reserved=0`,
		`dry run: 5 writes planned, nothing written`,
	}, "\n") + "\n"
	if stdout.String() != want {
		t.Fatalf("dry-run output:\n%s\nwant:\n%s", stdout.String(), want)
	}

	if n := proxy.Writes(); n != 0 || proxy.Total() == 0 {
		t.Fatalf("dry run sent %d writes (requests %v); want reads only", n, proxy.Counts())
	}
	if after := srv.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers", "1.39", nil); !bytes.Equal(after, listBefore) {
		t.Fatalf("providers changed by a dry run:\n%s\nwas:\n%s", after, listBefore)
	}
	if gen, invs := srv.Inventories(t, cn1); gen != genBefore || invs["VCPU"]["total"] != 16 || invs["MEMORY_MB"]["reserved"] != 4096 || len(invs) != len(invsBefore) {
		t.Fatalf("compute-1 changed by a dry run: generation %d -> %d, inventories %v -> %v", genBefore, gen, invsBefore, invs)
	}

	// The same pass for real makes exactly the planned writes.
	proxy.Reset()
	if code := run(t.Context(), []string{"agent", "--config", cfg, "--once"}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("agent --once after the dry run: exit %d: %s", code, stderr.String())
	}
	if n := proxy.Writes(); n != 5 {
		t.Fatalf("the real pass made %d writes (%v), the dry run planned 5", n, proxy.Counts())
	}
}

// TestAgentDryRun_NeedsOnce: --dry-run or --max-retirements without
// --once, or a limit that is no limit, is a usage error, and the flags
// are in the command's help.
func TestAgentDryRun_NeedsOnce(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", "x.yaml", "--dry-run"}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--dry-run needs --once") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"agent", "--config", "x.yaml", "--max-retirements", "100%"}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--max-retirements needs --once") {
		t.Fatalf("--max-retirements without --once: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"agent", "--config", "x.yaml", "--once", "--max-retirements", "lots"}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--max-retirements") {
		t.Fatalf("--max-retirements lots: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	run(t.Context(), []string{"agent", "-h"}, &bytes.Buffer{}, &stderr)
	if help := stderr.String(); !strings.Contains(help, "agent --config FILE [--once [--dry-run] [--max-retirements N|N%]]") ||
		!strings.Contains(help, "-dry-run") || !strings.Contains(help, "-max-retirements") {
		t.Fatalf("help:\n%s", help)
	}
}

// TestAgentDryRun_DeferredLines: the providers a driver leaves to another
// service are printed before its writes and counted apart from them in
// the summary; without any, the summary is as it was.
func TestAgentDryRun_DeferredLines(t *testing.T) {
	const left = `leave provider "node-1" (u1) to the service that reports it: it carries COMPUTE_IMAGE_TYPE_RAW; no writes`
	var out bytes.Buffer
	plans := []agent.Plan{{Driver: "ironic", Deferred: []string{left}, Writes: []string{`set traits of "node-2" (u2): +OWNER_NOVA`}}}
	if err := printPlans(&out, plans); err != nil {
		t.Fatal(err)
	}
	want := "ironic: " + left + "\n" +
		"ironic: set traits of \"node-2\" (u2): +OWNER_NOVA\n" +
		"dry run: 1 writes planned, 1 providers left to the service that reports them, nothing written\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printPlans(&out, []agent.Plan{{Driver: "ironic"}}); err != nil || out.String() != "dry run: 0 writes planned, nothing written\n" {
		t.Fatalf("nothing deferred: %q, %v", out.String(), err)
	}
}
