package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/reconciler/audit"
	"github.com/placement-syncd/placement-syncd/testkit/novatest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// testClock is a settable clock for the Placement server's created_at
// and updated_at, so that allocations can be made "an hour ago".
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// startClockedPlacement starts our Placement over SQLite with clock as
// the store's time; it stops at cleanup.
func startClockedPlacement(t *testing.T, clock *testClock) *placementtest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := dbstore.OpenFile(ctx, filepath.Join(t.TempDir(), "placement.db"), dbstore.Options{Migrate: true, Rules: ledger.Options{Now: clock.Now}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv, err := placementsrv.New(placementsrv.Options{Store: st})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("placement: %v", err)
		}
		_ = st.Close()
	})
	return &placementtest.Server{Kind: placementtest.Ours, URL: "http://" + ln.Addr().String(), Token: "admin", Version: "1.39"}
}

// auditWorld is the seeded cloud of TestAudit_RealNova.
type auditWorld struct {
	srv     *placementtest.Server
	orphans []string
	kept    []string // every other consumer, none of which may be deleted
	fresh   string
}

func auditUUID(kind string, i int) string {
	return fmt.Sprintf("a0d1%04s-0000-4000-8000-%012d", kind, i)
}

// seedAudit makes two computes (one per cell) with providers, Nova
// instances (live in each cell, one destroyed, one written before 1.8),
// an in-progress migration and a confirmed one, and allocations an hour
// old for each of them and for two consumers Nova never had, then a
// fresh claim and a consumer of another service (its own type).
func seedAudit(t *testing.T, n *novatest.Nova, clock *testClock) *auditWorld {
	ctx := context.Background()
	nodes, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "audit1", Version: 73}, novatest.Compute{Cell: "cell2", Host: "audit2", Version: 73})
	if err != nil {
		t.Fatal(err)
	}
	node1, node2, stale := nodes["audit1"][0], nodes["audit2"][0], auditUUID("5a1e", 1)
	live1, live2, gone, incomplete := auditUUID("1", 1), auditUUID("1", 2), auditUUID("de1", 3), auditUUID("1", 4)
	migrating, confirmed := auditUUID("319", 1), auditUUID("319", 2)
	err = n.AddInstances(ctx, []novatest.Instance{
		{UUID: live1, Cell: "cell1", Project: "p1", User: "u1", Host: "audit1", Node: "audit1"},
		{UUID: live2, Cell: "cell2", Project: "p2", User: "u2", Host: "audit2", Node: "audit2"},
		{UUID: gone, Cell: "cell2", Project: "p2", User: "u2", Host: "audit2", Node: "audit2", Deleted: true},
		{UUID: incomplete, Cell: "cell1", Project: "p1", User: "u1", Host: "audit1", Node: "audit1"},
	}, []novatest.Migration{
		{UUID: migrating, Instance: live1, Cell: "cell1", Status: "migrating", Source: "audit1", Dest: "audit2"},
		{UUID: confirmed, Instance: live2, Cell: "cell2", Status: "confirmed", Source: "audit2", Dest: "audit1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &auditWorld{srv: startClockedPlacement(t, clock)}
	base := time.Now().Add(-time.Hour)
	clock.Set(base)
	for _, p := range []struct{ uuid, name string }{{node1, "audit1"}, {node2, "audit2"}, {stale, "retired"}} {
		w.srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"uuid": p.uuid, "name": p.name})
		w.srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+p.uuid+"/traits", "1.39",
			map[string]any{"resource_provider_generation": 0, "traits": []string{"COMPUTE_NODE"}})
		w.srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+p.uuid+"/inventories", "1.39", map[string]any{"resource_provider_generation": 1,
			"inventories": map[string]any{"VCPU": map[string]any{"total": 8, "allocation_ratio": 4.0}, "MEMORY_MB": map[string]any{"total": 8192}}})
	}
	orphan1, orphan2 := auditUUID("0f", 1), auditUUID("0f", 2)
	for i, c := range []string{live1, live2, gone, migrating, confirmed, orphan1, orphan2} {
		w.srv.Allocate(t, c, []string{node1, node2}[i%2], map[string]int{"VCPU": 4, "MEMORY_MB": 512})
	}
	// Written at 1.7, before consumers had owners: the placeholder ones.
	w.srv.MustDo(t, http.StatusNoContent, http.MethodPut, "/allocations/"+incomplete, "1.7", map[string]any{"allocations": []any{
		map[string]any{"resource_provider": map[string]any{"uuid": node1}, "resources": map[string]int{"MEMORY_MB": 256}}}})
	// audit1's ratio lowered under its use (16 VCPU on 8 × 1.0).
	gen, _ := w.srv.Inventories(t, node1)
	w.srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+node1+"/inventories", "1.39", map[string]any{"resource_provider_generation": gen,
		"inventories": map[string]any{"VCPU": map[string]any{"total": 8, "allocation_ratio": 1.0}, "MEMORY_MB": map[string]any{"total": 8192}}})
	clock.Set(time.Now())
	w.fresh = auditUUID("f5e", 1)
	w.srv.Allocate(t, w.fresh, node2, map[string]int{"VCPU": 1})
	foreign := auditUUID("b1a", 1)
	w.srv.MustDo(t, http.StatusNoContent, http.MethodPut, "/allocations/"+foreign, "1.39", map[string]any{
		"allocations": map[string]any{node2: map[string]any{"resources": map[string]int{"MEMORY_MB": 128}}},
		"project_id":  "p3", "user_id": "u3", "consumer_generation": nil, "consumer_type": "BLAZAR_RESERVATION"})
	w.orphans = []string{orphan1, orphan2, confirmed}
	w.kept = []string{live1, live2, gone, migrating, incomplete, w.fresh, foreign}
	return w
}

// holding returns which of consumers still hold allocations.
func (w *auditWorld) holding(t *testing.T, consumers []string) []string {
	t.Helper()
	var out []string
	for _, c := range consumers {
		if b := w.srv.MustDo(t, http.StatusOK, http.MethodGet, "/allocations/"+c, "1.39", nil); !regexp.MustCompile(`"allocations":\{\}`).Match(b) {
			out = append(out, c)
		}
	}
	return out
}

var orphanLine = regexp.MustCompile(`(?m)^orphaned_consumer: consumer (\S+) `)

func listedOrphans(stdout string) []string {
	var out []string
	for _, m := range orphanLine.FindAllStringSubmatch(stdout, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// TestAudit_RealNova runs `placement-syncd audit` against the real
// nova-api with two cells (compute API and cell databases both
// configured) and our Placement: the dry run lists exactly the orphans
// (consumers Nova never had and a confirmed migration's), not the live,
// destroyed, migrating, fresh or foreign consumers; with cell2
// unreadable --delete deletes nothing and exits 5, saying why; the
// mass-removal guard refuses; --delete then removes exactly the orphans.
func TestAudit_RealNova(t *testing.T) {
	ctx := context.Background()
	n := realNova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &testClock{}
	w := seedAudit(t, n, clock)
	dir := t.TempDir()
	config := func(name, maxRemovals string) string {
		path := filepath.Join(dir, name)
		writeFile(t, path, fmt.Sprintf("reconciler:\n  state_file: %s\n  placement:\n    url: %s\n    token: admin\n"+
			"  nova:\n    endpoint: %s\n    token: %s\n    api_database: %s\n  audit:\n    grace: 10m\n    max_removals: \"%s\"\n",
			filepath.Join(dir, "state.json"), w.srv.URL, n.Endpoint, novatest.Token, n.APIDatabase, maxRemovals))
		return path
	}
	cfg, tight := config("audit.yaml", "5"), config("tight.yaml", "2")
	want := slices.Sorted(slices.Values(w.orphans))
	all := append(append([]string{}, w.orphans...), w.kept...)

	r := syncd.Exec(t, dir, "audit", "--config", cfg)
	t.Logf("$ placement-syncd audit (dry run): exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	wantOutput(t, r, exitAuditOrphans, []string{"within grace, not touched: consumer " + w.fresh, "stale_provider: provider " + auditUUID("5a1e", 1),
		"over_capacity: provider", "incomplete_consumer: consumer " + auditUUID("1", 4), "3 orphaned, 1 stale providers, 1 over capacity, 1 incomplete, 1 within grace; 0 deleted"}, nil)
	if got := listedOrphans(r.Stdout); !slices.Equal(got, want) {
		t.Errorf("dry run listed orphans %v, want %v", got, want)
	}
	if got := w.holding(t, all); len(got) != len(all) {
		t.Fatalf("the dry run deleted: holding %v of %v", got, all)
	}

	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	r = syncd.Exec(t, dir, "audit", "--delete", "--config", cfg)
	t.Logf("$ placement-syncd audit --delete (cell2 down): exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	wantOutput(t, r, exitAuditNovaPartial, []string{"nova partial: cell cell2 database not readable", "orphaned_consumer: consumer " + w.orphans[0], "unconfirmed, not acted on", "0 deleted"}, nil)
	if got := w.holding(t, all); len(got) != len(all) {
		t.Fatalf("cell2 down: deleted, holding %v of %v", got, all)
	}
	if err := n.Readable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}

	r = syncd.Exec(t, dir, "audit", "--delete", "--config", tight)
	t.Logf("$ placement-syncd audit --delete (max_removals 2): exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	wantOutput(t, r, exitRefused, []string{"refused: 3 orphaned consumers of 9 Nova consumers is more than max_removals 2 (2)"}, nil)
	if got := w.holding(t, all); len(got) != len(all) {
		t.Fatalf("refused run deleted: holding %v of %v", got, all)
	}

	r = syncd.Exec(t, dir, "audit", "--delete", "--config", cfg)
	t.Logf("$ placement-syncd audit --delete: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	wantOutput(t, r, exitAuditDeleted, []string{"3 deleted"}, nil)
	if got := w.holding(t, w.orphans); len(got) != 0 {
		t.Errorf("orphans left after --delete: %v", got)
	}
	if got := w.holding(t, w.kept); !slices.Equal(got, w.kept) {
		t.Errorf("--delete removed more than the orphans: holding %v of %v", got, w.kept)
	}

	// The orphans' VCPU gone, audit1 is within its capacity again.
	r = syncd.Exec(t, dir, "audit", "--config", cfg)
	t.Logf("$ placement-syncd audit (after --delete): exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	wantOutput(t, r, exitAuditOther, []string{"0 orphaned, 1 stale providers, 0 over capacity, 1 incomplete"}, nil)

	// The daemon's job, from the same configuration.
	job := filepath.Join(dir, "job.yaml")
	writeFile(t, job, fmt.Sprintf("reconciler:\n  state_file: %s\n  placement:\n    url: %s\n    token: admin\n"+
		"  jobs:\n    aggregates: \"\"\n    owner_traits: \"\"\n    audit: \"@every 1h\"\n  nova:\n    endpoint: %s\n    token: %s\n",
		filepath.Join(dir, "state.json"), w.srv.URL, n.Endpoint, novatest.Token))
	loaded, err := loadConfig(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rec, err := assemble.NewReconciler(ctx, loaded.Reconciler, "", nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rec.RunJob(ctx, reconciler.JobAudit)
	t.Logf("job audit: %s: %s", run.Result, run.Detail)
	if err != nil || !strings.Contains(run.Detail, "0 orphaned, 1 stale providers, 0 over capacity, 1 incomplete, 1 within grace") {
		t.Fatalf("job audit: %v %q", err, run.Detail)
	}
	if got := gaugeValue(t, reg, "placement_syncd_audit_findings", "kind", audit.FindingStaleProvider); got != 1 {
		t.Errorf("placement_syncd_audit_findings{kind=stale_provider} = %v, want 1", got)
	}
	if got := gaugeValue(t, reg, "placement_syncd_audit_runs_total", "result", reconciler.AuditResultOK); got != 1 {
		t.Errorf("placement_syncd_audit_runs_total{result=ok} = %v, want 1", got)
	}
}

// gaugeValue is the value of family's series with label = value (a gauge
// or a counter); -1 when there is none.
func gaugeValue(t *testing.T, g prometheus.Gatherer, family, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if m.GetGauge() != nil {
						return m.GetGauge().GetValue()
					}
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// TestAudit_Config: reconciler.audit's errors name the file, the line and
// the key; defaults are a 10 minute grace, dry runs and 10%.
func TestAudit_Config(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	writeFile(t, path, "reconciler:\n  jobs:\n    audit: \"every now and then\"\n  audit:\n    grace: -1m\n    max_removals: \"lots\"\n")
	_, err := loadConfig(path, nil)
	for _, want := range []string{path + ":3: reconciler.jobs.audit: invalid cron schedule", path + ":5: reconciler.audit.grace: must not be negative",
		path + ":6: reconciler.audit.max_removals: \"lots\" is neither", "reconciler.jobs.audit: the audit needs Nova's compute API"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	d := config.Default().Reconciler.Audit
	if d.Grace != 10*time.Minute || d.Delete || d.MaxRemovals != "10%" {
		t.Errorf("defaults %+v", d)
	}
	r := syncd.Exec(t, dir, "audit", "--force")
	wantOutput(t, r, exitUsage, nil, []string{"--force only goes with --delete"})
}

// TestAudit_NovaOrPlacementUnreachable: Nova answering nothing exits 5
// with nothing deleted and what Placement alone shows; Placement
// answering nothing exits 1.
func TestAudit_NovaOrPlacementUnreachable(t *testing.T) {
	dir := t.TempDir()
	srv := placementtest.StartOurs(t, placementtest.Options{})
	srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"uuid": auditUUID("1", 9), "name": "n"})
	srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+auditUUID("1", 9)+"/inventories", "1.39", map[string]any{
		"resource_provider_generation": 0, "inventories": map[string]any{"VCPU": map[string]any{"total": 4}}})
	srv.Allocate(t, auditUUID("0f", 9), auditUUID("1", 9), map[string]int{"VCPU": 1})
	closed := "http://127.0.0.1:1/v2.1"
	for _, c := range []struct {
		name, placement, nova string
		code                  int
		say                   string
	}{
		{"nova", srv.URL, closed, exitAuditNovaPartial, "Nova was read in part or not at all"},
		{"placement", "http://127.0.0.1:1", closed, exitFailure, ""},
	} {
		path := filepath.Join(dir, c.name+".yaml")
		writeFile(t, path, fmt.Sprintf("reconciler:\n  state_file: %s\n  placement:\n    url: %s\n    token: admin\n  nova:\n    endpoint: %s\n    token: t\n",
			filepath.Join(dir, "state.json"), c.placement, c.nova))
		r := syncd.Exec(t, dir, "audit", "--delete", "--config", path)
		t.Logf("$ placement-syncd audit --delete (%s unreachable): exit %d\n%s%s", c.name, r.Code, r.Stdout, r.Stderr)
		wantOutput(t, r, c.code, []string{c.say}, nil)
	}
	if b := srv.MustDo(t, http.StatusOK, http.MethodGet, "/allocations/"+auditUUID("0f", 9), "1.39", nil); !strings.Contains(string(b), "VCPU") {
		t.Fatalf("deleted with Nova unreachable: %s", b)
	}
}
