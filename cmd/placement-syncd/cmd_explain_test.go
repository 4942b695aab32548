package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/demo"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// TestExplain_Demo runs `placement-syncd explain` against a real running
// demo (serve with the agent and the reconciler, the demo's providers)
// for the three cases an operator meets: a bare-metal flavor whose nodes
// are all cleaning (reserved == total), a flavor asking for a trait no
// host has, and a request the OWNER_NOVA pre-filter empties (the FPGA is
// Cyborg's). Run with -v to see the three outputs.
func TestExplain_Demo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	cfgPath := demoConfigFor(t, dir)
	demoInit(t, ctx, cfgPath)
	s := startAllInOne(t, cfgPath)
	cleanBothGold(t, ctx, cfgPath, s)
	// The compute node and its FPGA (Cyborg's) exist too.
	device := fpga.ProviderUUID("demo-compute", demo.FPGADevice)
	daemontest.Eventually(t, ctx, "the FPGA is reported, owned by Cyborg", func() bool {
		if !providerExists(t, ctx, s, device) || !providerExists(t, ctx, s, demo.ComputeUUID) {
			return false
		}
		var body struct{ Traits []string }
		s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+device+"/traits", nil).Decode(t, &body)
		return slices.Contains(body.Traits, "OWNER_CYBORG")
	})

	explain := func(query string, extra ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"explain", query, "--config", cfgPath, "--url", s.URL}, extra...)
		if code := run(ctx, args, &out, &errb); code != exitOK {
			t.Fatalf("explain %q: exit %d: %s", query, code, errb.String())
		}
		t.Logf("$ placement-syncd explain '%s' %s\n%s", query, strings.Join(extra, " "), out.String())
		return out.String()
	}
	// The gate opens once the reconciler has read the services; until
	// then the pre-filter is off.
	daemontest.Eventually(t, ctx, "the OWNER_NOVA pre-filter is on", func() bool {
		var out bytes.Buffer
		code := run(ctx, []string{"explain", "resources=VCPU:1", "--config", cfgPath, "--url", s.URL}, &out, &bytes.Buffer{})
		return code == exitOK && strings.Contains(out.String(), "pre-filter: applied as for nova")
	})

	held := explain("resources=CUSTOM_BAREMETAL_GOLD:1")
	for _, want := range []string{
		"candidates: 0 returned",
		// Ironic node providers are named by the node's uuid, as Nova's.
		demo.Nodes()[0].UUID + ": CUSTOM_BAREMETAL_GOLD: held back: reserved == total (1)",
		"group (unsuffixed): every provider of CUSTOM_BAREMETAL_GOLD is held back (reserved == total): 2",
	} {
		assertContains(t, held, want)
	}

	// Both gold nodes have the class, both are held back, none fits.
	if got := lineFields(held, "CUSTOM_BAREMETAL_GOLD:1"); strings.Join(got, " ") != "CUSTOM_BAREMETAL_GOLD:1 2 2 0 0 0" {
		t.Errorf("class line %q, want with 2, held back 2, no room 0, fit 0, sharing 0", got)
	}

	trait := explain("resources=VCPU:4,MEMORY_MB:2048&required=HW_CPU_X86_AVX512F", "--microversion", "1.39")
	for _, want := range []string{
		"required=HW_CPU_X86_AVX512F",
		"  demo-compute (" + demo.ComputeUUID + ")\n    - missing trait HW_CPU_X86_AVX512F\n",
		"group (unsuffixed): no provider passes required=HW_CPU_X86_AVX512F",
		"removing required=HW_CPU_X86_AVX512F yields candidates at 1 root",
	} {
		assertContains(t, trait, want)
	}

	pre := explain("resources=FPGA:1", "--microversion", "1.29")
	for _, want := range []string{
		"required=!OWNER_CYBORG [OWNER_NOVA pre-filter]",
		"demo-compute_0000:5e:00.0: has forbidden trait OWNER_CYBORG (OWNER_NOVA pre-filter)",
		"removing required=!OWNER_CYBORG (added by the OWNER_NOVA pre-filter) yields candidates at 1 root",
	} {
		assertContains(t, pre, want)
	}

	// A storage pool an operator made by hand, not Nova's: bigger than
	// the compute node's disk, but the pre-filter's root_required keeps
	// it out.
	const pool = "5e0a0000-0000-4000-8000-000000000001"
	s.API.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", map[string]string{"name": "nfs-pool", "uuid": pool})
	s.API.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+pool+"/inventories", map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{"DISK_GB": map[string]int{"total": 10000}}})
	root := explain("resources=DISK_GB:2000")
	for _, want := range []string{
		"nfs-pool (" + pool + ")\n    - root lacks trait OWNER_NOVA (OWNER_NOVA pre-filter)\n",
		"demo-compute: DISK_GB: needs 2000, free 1000 (total 1000 × 1.0 − reserved 0 − used 0)",
		"removing root_required=OWNER_NOVA (added by the OWNER_NOVA pre-filter) yields candidates at 1 root",
	} {
		assertContains(t, root, want)
	}
	if got := lineFields(root, "root_required=OWNER_NOVA"); strings.Join(got, " ") != "root_required=OWNER_NOVA [OWNER_NOVA pre-filter] 1 4" {
		t.Errorf("root_required stage %q, want 1 removed, 4 left", got)
	}

	// A query /allocation_candidates refuses: its 400, exit 1.
	var errb bytes.Buffer
	if code := run(ctx, []string{"explain", "resources=VCPU:x", "--config", cfgPath, "--url", s.URL}, &bytes.Buffer{}, &errb); code != exitFailure ||
		!strings.Contains(errb.String(), "400 Bad Request") || !strings.Contains(errb.String(), "expected positive integer amount. Got: x.") {
		t.Errorf("bad query: exit %d, stderr %q", code, errb.String())
	}

	// Not the scheduler: the pre-filter stays out of the way.
	asAdmin := explain("resources=FPGA:1", "--user", "admin")
	assertContains(t, asAdmin, "pre-filter: not applied")
	assertContains(t, asAdmin, "candidates: 1 returned")
}

// TestExplain_Usage: a missing query is a usage error (2), a daemon
// that cannot be reached a failure (1).
func TestExplain_Usage(t *testing.T) {
	ctx := context.Background()
	var errb bytes.Buffer
	if code := run(ctx, []string{"explain"}, &bytes.Buffer{}, &errb); code != exitUsage || !strings.Contains(errb.String(), "want exactly one query string") {
		t.Errorf("no query: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run(ctx, []string{"explain", "resources=VCPU:1", "--url", "http://127.0.0.1:1"}, &bytes.Buffer{}, &errb); code != exitFailure ||
		!strings.Contains(errb.String(), "is the daemon running?") {
		t.Errorf("no daemon: exit %d: %s", code, errb.String())
	}
}

// cleanBothGold puts both gold nodes into cleaning, asks the agent for a
// pass and waits until both are held back.
func cleanBothGold(t *testing.T, ctx context.Context, cfgPath string, s *allInOne) {
	t.Helper()
	cfg, err := loadConfig(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := demo.FilesFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Write(demo.Step{Nodes: [3]demo.NodeState{demo.Cleaning, demo.CleanWait, demo.Available}}); err != nil {
		t.Fatal(err)
	}
	c := demo.NewCycler(cfg, files, time.Second, zap.NewNop())
	c.AgentURL = s.agent.Base
	daemontest.Eventually(t, ctx, "the agent takes a pass", func() bool { return c.Resync(ctx) == nil })
	for _, n := range []demo.Node{demo.Nodes()[0], demo.Nodes()[1]} {
		daemontest.Eventually(t, ctx, n.Name+" is held back", func() bool {
			var body struct {
				Inventories map[string]struct{ Total, Reserved int }
			}
			// The node may not exist yet: the agent's first pass creates it.
			if !providerExists(t, ctx, s, n.UUID) {
				return false
			}
			s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+n.UUID+"/inventories", nil).Decode(t, &body)
			inv := body.Inventories["CUSTOM_BAREMETAL_GOLD"]
			return inv.Total == 1 && inv.Reserved == 1
		})
	}
}

func providerExists(t *testing.T, ctx context.Context, s *allInOne, uuid string) bool {
	t.Helper()
	var list struct {
		ResourceProviders []any `json:"resource_providers"`
	}
	s.API.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers?uuid="+uuid, nil).Decode(t, &list)
	return len(list.ResourceProviders) == 1
}

func assertContains(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// lineFields returns the fields of out's first line whose first field is
// first.
func lineFields(out, first string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// TestExplain_MicroversionRange: a --microversion the daemon would refuse
// (below 1.10, where allocation candidates do not exist: 404; above the
// highest, the binary's or api.max_microversion: 406) or cannot read is
// a usage error (2) found before any request: the daemon's port sees no
// connection.
func TestExplain_MicroversionRange(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := filepath.Join(t.TempDir(), "explain.yaml")
	writeFile(t, cfg, "api:\n  listen: "+ln.Addr().String()+"\n  max_microversion: \"1.30\"\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--microversion", "1.5", "--url", "http://" + ln.Addr().String()}, "--microversion 1.5: allocation candidates are explained at microversions 1.10 to 1.39 (the highest set by this binary), or latest"},
		{[]string{"--microversion", "1.40", "--url", "http://" + ln.Addr().String()}, "--microversion 1.40: allocation candidates are explained at microversions 1.10 to 1.39 (the highest set by this binary), or latest"},
		{[]string{"--microversion", "2.0", "--config", cfg}, "--microversion 2.0: allocation candidates are explained at microversions 1.10 to 1.39 (the highest set by this binary), or latest"},
		{[]string{"--microversion", "1.31", "--config", cfg}, "--microversion 1.31: allocation candidates are explained at microversions 1.10 to 1.30 (the highest set by api.max_microversion), or latest"},
		{[]string{"--microversion", "one", "--config", cfg}, `--microversion: malformed microversion: "one"; want 1.10 to 1.39, or latest`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"explain", "resources=VCPU:1"}, tt.args...), &stdout, &stderr)
		if want := "placement-syncd: explain: " + tt.want + "\n"; code != exitUsage || stderr.String() != want {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr.String(), exitUsage, want)
		}
	}
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		if c != nil {
			c.Close()
		}
		t.Errorf("the daemon's port was contacted (accept: %v)", err)
	}
}
