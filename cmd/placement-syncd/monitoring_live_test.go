package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// The files monitoring/ ships, and Debian's Prometheus server.
const (
	monitoringRules     = "../../monitoring/placement-syncd.rules.yml"
	monitoringDashboard = "../../monitoring/placement-syncd.dashboard.json"
	prometheusBin       = "/usr/bin/prometheus"
)

// monExpr is one PromQL expression of the dashboard or the rules.
type monExpr struct {
	kind  string // panel, record, recorded or alert
	name  string // panel title, rule name
	expr  string
	names []string // the metric and recording-rule names it reads
}

// TestMonitoringLive runs placement-syncd as the demo does (API,
// reconciler, agent, `demo cycle`, and capacity by flavor) on MariaDB, with a second API replica
// on the same database so that the change feed has a follower, and
// Debian's Prometheus scraping both every second with the rules loaded.
// It then asserts, one logged line per expression:
//   - every dashboard expression (Grafana's $__rate_interval as 5m) and
//     every recording rule's expression returns at least one series (a NaN
//     value, e.g. a quantile of a histogram without observations in the
//     window, counts as data: the series exists);
//   - every recording rule's series, as Prometheus recorded it, exists;
//   - every alert expression is accepted by Prometheus (its result may
//     rightly be empty: its threshold is not crossed), and every metric or
//     recording rule it names returns data. The label matchers of an alert
//     (result="error", code=~"5..") are not required to match: a healthy
//     demo has no failures;
//   - every alert of the rules file is loaded and evaluates without error
//     (health ok), none fires, and those a healthy demo must not trip
//     (healthyAlerts) are inactive: their expression matches nothing;
//   - PlacementSyncdTargetDown matches the third target of the scrape job,
//     a closed port, and nothing else: it is pending there (firing waits
//     out its 5 minutes of `for:`, which promtool's tests cover).
func TestMonitoringLive(t *testing.T) {
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Fatalf("%s: %v; install Debian's prometheus package (apt-get install prometheus)", prometheusBin, err)
	}
	exprs := monitoringExprs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	a, replica := startMonitoredDemo(t, ctx)
	// A 404 and a generation conflict for the dashboard's error panels.
	rp := "c0ffee00-0000-4000-8000-000000000001"
	a.API.MustDo(t, http.StatusNotFound, http.MethodGet, "/resource_providers/"+rp, nil)
	a.API.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", map[string]any{"name": "monitoring-1", "uuid": rp})
	inv := map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}}
	a.API.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+rp+"/inventories", inv)
	a.API.MustDo(t, http.StatusConflict, http.MethodPut, "/resource_providers/"+rp+"/inventories", inv)
	// A target nobody listens on, in the same scrape job.
	closed := freeAddr(t)
	prom := startPrometheus(t, ctx, []string{strings.TrimPrefix(a.URL, "http://"), strings.TrimPrefix(replica, "http://"), closed})

	// Two scrapes of each target at least, so that rate() has its two points.
	daemontest.Eventually(t, ctx, "Prometheus scraped both live targets 3 times", func() bool {
		n, err := prom.query(ctx, `count_over_time(up{job="placement-syncd"}[1m]) >= 3 and up == 1`)
		return err == nil && n == 2
	})
	// Data may take a demo step or two to appear (a job run, a feed
	// change); past this point each expression is asked once more only.
	deadline := time.Now().Add(90 * time.Second)
	checked := 0
	for _, e := range exprs {
		if line, err := prom.check(ctx, deadline, e); err != nil {
			t.Errorf("FAIL    %-8s %s: %v: %s", e.kind, e.name, err, oneLine(e.expr))
		} else {
			t.Logf("ok      %-8s %s: %s: %s", e.kind, e.name, line, oneLine(e.expr))
		}
		checked++
	}
	t.Logf("%d expressions checked", checked)
	if checked < 40 {
		t.Errorf("only %d expressions checked; the dashboard and the rules hold more", checked)
	}
	checkAlertStates(t, ctx, prom, exprs, closed)
}

// healthyAlerts must match nothing on the demo: the API has no 5xx and
// answers within a second, every agent driver has passed, every job run
// succeeded, one replica leads and the gate has opened. The others may
// rightly be pending: the demo holds nodes back (cleaning, programming),
// and its second replica runs no reconciler, so its pre-filter is off.
var healthyAlerts = []string{"PlacementSyncdAPIErrorsHigh", "PlacementSyncdAPILatencyHigh", "PlacementSyncdAgentNoSuccessfulPass",
	"PlacementSyncdAgentPassesFailing", "PlacementSyncdReconcilerJobFailing", "PlacementSyncdCapacityLow", "PlacementSyncdFeedLagHigh",
	"PlacementSyncdReconcilerLeaderLost", "PlacementSyncdOwnerNovaGateClosed", "PlacementSyncdAuditFailing"}

// checkAlertStates asserts what TestMonitoringLive says of the alerts'
// states, waiting for PlacementSyncdTargetDown to go pending.
func checkAlertStates(t *testing.T, ctx context.Context, prom *promServer, exprs []monExpr, closed string) {
	t.Helper()
	var rules map[string]promAlertRule
	daemontest.Eventually(t, ctx, "PlacementSyncdTargetDown is pending or firing", func() bool {
		var err error
		rules, err = prom.alertRules(ctx)
		return err == nil && rules["PlacementSyncdTargetDown"].State != "inactive" && rules["PlacementSyncdTargetDown"].State != ""
	})
	for _, e := range exprs {
		if e.kind != "alert" {
			continue
		}
		r, ok := rules[e.name]
		switch {
		case !ok:
			t.Errorf("FAIL    alert %s: not loaded by Prometheus", e.name)
		case r.Health != "ok":
			t.Errorf("FAIL    alert %s: health %q: %s", e.name, r.Health, r.LastError)
		case r.State == "firing":
			t.Errorf("FAIL    alert %s: firing on the demo: %v", e.name, r.Alerts)
		case slices.Contains(healthyAlerts, e.name) && r.State != "inactive":
			t.Errorf("FAIL    alert %s: %s on a healthy demo: %v", e.name, r.State, r.Alerts)
		default:
			t.Logf("ok      alert %s: health ok, %s %v", e.name, r.State, r.Alerts)
		}
	}
	down := rules["PlacementSyncdTargetDown"].Alerts
	if len(down) != 1 || down[0].Labels["instance"] != closed || down[0].Labels["job"] != "placement-syncd" || down[0].Labels["severity"] != "critical" {
		t.Errorf("PlacementSyncdTargetDown: alerts %v, want one for the closed port %s in job placement-syncd", down, closed)
	}
}

// promAlertRule is an alerting rule as Prometheus's /api/v1/rules shows it.
type promAlertRule struct {
	Name, State, Health, LastError string
	Alerts                         []struct {
		Labels map[string]string
		State  string
	}
}

// alertRules returns Prometheus's alerting rules by name.
func (p *promServer) alertRules(ctx context.Context) (map[string]promAlertRule, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/rules?type=alert", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Groups []struct{ Rules []promAlertRule }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("rules: HTTP %d: %w", resp.StatusCode, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("rules: HTTP %d: status %q", resp.StatusCode, body.Status)
	}
	out := map[string]promAlertRule{}
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			out[r.Name] = r
		}
	}
	return out, nil
}

// oneLine is expr on one line, for the log.
func oneLine(expr string) string { return strings.Join(strings.Fields(expr), " ") }

// monitoringExprs reads every expression of the dashboard and the rules.
func monitoringExprs(t *testing.T) []monExpr {
	t.Helper()
	// Our metric names, and recording-rule names (level:metric:operations).
	names := regexp.MustCompile(`[a-zA-Z_][a-zA-Z0-9_]*(?::[a-zA-Z0-9_]+)+|placement_syncd_[a-zA-Z0-9_]+`)
	var out []monExpr
	add := func(kind, name, expr string) {
		found := names.FindAllString(expr, -1)
		slices.Sort(found)
		out = append(out, monExpr{kind: kind, name: name, expr: expr, names: slices.Compact(found)})
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	readJSONFile(t, monitoringDashboard, &dash)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			add("panel", p.Title, strings.ReplaceAll(tg.Expr, "$__rate_interval", "5m"))
		}
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Record, Alert, Expr string }
		}
	}
	b, err := os.ReadFile(monitoringRules)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("%s: %v", monitoringRules, err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				add("record", r.Record, strings.TrimSpace(r.Expr))
				add("recorded", r.Record, r.Record)
			} else {
				add("alert", r.Alert, strings.TrimSpace(r.Expr))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no expressions in the dashboard or the rules")
	}
	return out
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// startMonitoredDemo runs the demo's serve (configs/demo.yaml) on a fresh
// MariaDB database, its demo cycle, and a second API replica on the same
// database; it returns the demo's addresses and the replica's API URL.
func startMonitoredDemo(t *testing.T, ctx context.Context) (*allInOne, string) {
	t.Helper()
	maria := mariadbtest.Start(t)
	dbURL := maria.URL(maria.NewDatabase(t))
	var stderr bytes.Buffer
	if code := run(ctx, []string{"db", "migrate", "--db", dbURL}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("db migrate: exit %d: %s", code, stderr.String())
	}
	dir := t.TempDir()
	cfgPath := demoConfigFor(t, dir)
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sqlite := "  path: " + dir + "/placement.db"
	if !bytes.Contains(b, []byte(sqlite)) {
		t.Fatalf("configs/demo.yaml no longer has %q; update this test", sqlite)
	}
	writeFile(t, cfgPath, strings.Replace(string(b), sqlite, "  connection: \""+dbURL+"\"", 1))
	demoInit(t, ctx, cfgPath)
	a := startAllInOne(t, cfgPath)
	waitCapacity(t, ctx, a.Daemon)

	replicaCfg := filepath.Join(dir, "replica.yaml")
	writeFile(t, replicaCfg, "api:\n  listen: \"127.0.0.1:0\"\ndatabase:\n  connection: \""+dbURL+"\"\nlog:\n  format: json\n")
	replica := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", replicaCfg}}).URL

	syncd.Start(t, daemontest.Options{InProcess: true, NoWait: true, Args: []string{"demo", "cycle", "--config", cfgPath, "--period", "1s",
		"--agent", strings.TrimPrefix(a.agent.Base, "http://"), "--reconciler", strings.TrimPrefix(a.reconciler.Base, "http://")}})
	return a, replica
}

// promServer is a Prometheus server started by the test.
type promServer struct {
	base   string
	client *http.Client
}

// startPrometheus runs Debian's prometheus in its own process group on a
// free loopback port, with a temporary data directory, scraping targets
// (one scrape job, placement-syncd) every second and evaluating the rules
// every second; the test's cleanup stops the whole group.
func startPrometheus(t *testing.T, ctx context.Context, targets []string) *promServer {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(monitoringRules)
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\n"+
		"scrape_configs:\n  - job_name: placement-syncd\n    static_configs:\n      - targets: [%s]\n", rules, strings.Join(quoted, ", "))
	writeFile(t, filepath.Join(dir, "prometheus.yml"), cfg)
	addr := freeAddr(t)
	var log bytes.Buffer
	cmd := exec.Command(prometheusBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", prometheusBin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p := &promServer{base: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second}}
	t.Cleanup(func() {
		p.client.CloseIdleConnections()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	daemontest.Eventually(t, ctx, "prometheus is ready", func() bool {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", log.String())
		default:
		}
		resp, err := p.client.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// query runs an instant query and returns how many series it answered.
func (p *promServer) query(ctx context.Context, q string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, body.Error)
	}
	return len(body.Data.Result), nil
}

// waitData polls q until it answers at least one series, or until
// deadline has passed.
func (p *promServer) waitData(ctx context.Context, deadline time.Time, q string) (int, error) {
	for {
		n, err := p.query(ctx, q)
		if err == nil && n > 0 {
			return n, nil
		}
		if err == nil {
			err = errors.New("no data")
		}
		if time.Now().After(deadline) {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// check asserts what TestMonitoringLive says of e and describes it.
func (p *promServer) check(ctx context.Context, deadline time.Time, e monExpr) (string, error) {
	if e.kind != "alert" {
		n, err := p.waitData(ctx, deadline, e.expr)
		return fmt.Sprintf("%d series", n), err
	}
	n, err := p.query(ctx, e.expr)
	if err != nil {
		return "", fmt.Errorf("expression refused: %w", err)
	}
	var with []string
	for _, name := range e.names {
		m, err := p.waitData(ctx, deadline, name)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		with = append(with, fmt.Sprintf("%s %d series", name, m))
	}
	if len(with) == 0 {
		return "", errors.New("names no metric")
	}
	return fmt.Sprintf("evaluates, %d series past its threshold now; data for %s", n, strings.Join(with, ", ")), nil
}
