package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
)

// policy8 is a policy file as an operator of Placement 8.0.0 kept it:
// its rule names a rule only 8.0.0 defines.
const policy8 = "# kept from Placement 8.0.0\n\"placement:resource_providers:list\": \"rule:system_reader_api\"\n"

// upgradeConfig writes a keystone-authenticated serve config over the
// database and policy file in dir: api.release is named when rel is
// not "", and extra is appended to the policy section.
func upgradeConfig(t *testing.T, ks *keystonetest.Keystone, dir, name, rel, extra string) string {
	t.Helper()
	api := "api:\n  listen: \"127.0.0.1:0\"\n  auth_strategy: keystone\n"
	if rel != "" {
		api += "  release: \"" + rel + "\"\n"
	}
	path := filepath.Join(dir, name)
	writeFile(t, path, api+
		"database:\n  path: \""+filepath.Join(dir, "placement.db")+"\"\n"+
		"keystone_authtoken:\n  auth_url: \""+ks.AuthURL()+"\"\n  username: \""+keystonetest.Validator+"\"\n  password: \""+keystonetest.Password+"\"\n"+
		"  project_name: \""+keystonetest.ProjectService+"\"\n"+
		"policy:\n  file: \""+filepath.Join(dir, "policy.yaml")+"\"\n"+extra)
	return path
}

// startLine is serve's start-up line.
type startLine struct {
	Release            string `json:"release"`
	ReleaseSource      string `json:"release_source"`
	EnforceScope       *bool  `json:"enforce_scope"`
	EnforceNewDefaults *bool  `json:"enforce_new_defaults"`
}

func (s startLine) String() string {
	b := func(p *bool) string {
		if p == nil {
			return "absent"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("release=%s source=%s enforce_scope=%s enforce_new_defaults=%s", s.Release, s.ReleaseSource, b(s.EnforceScope), b(s.EnforceNewDefaults))
}

// started returns the fields of the start-up line in log.
func started(t *testing.T, log *daemontest.Log) startLine {
	t.Helper()
	line, ok := log.Find(daemontest.Started, nil)
	b, err := json.Marshal(line)
	var s startLine
	if err := errors.Join(err, json.Unmarshal(b, &s)); !ok || err != nil {
		t.Fatalf("no start-up line (%v) in:\n%s", err, log)
	}
	return s
}

// releaseWarning is the start-up warning of a release changed by default.
const releaseWarning = "the Placement release served changed by default"

// TestUpgradeRelease is an upgrade from a binary that served Placement
// 8.0.0's rules to one whose default is 15.0.0, with the operator's
// config and 8.0.0-era policy file kept: a system-scoped admin token
// works under 8.0.0; without api.release the policy file stops start-up
// (exit 2, naming file, line and rule); told to go on, serve names the
// release change in its log and metrics, and the token is refused; with
// api.release "8.0.0" set, it works again.
func TestUpgradeRelease(t *testing.T) {
	ks := keystonetest.Start(t, keystonetest.Options{})
	system := ks.Token(t, keystonetest.Admin, keystonetest.System)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policy.yaml"), policy8)
	named := upgradeConfig(t, ks, dir, "named.yaml", "8.0.0", "")
	unnamed := upgradeConfig(t, ks, dir, "unnamed.yaml", "", "")

	t.Run("served under 8.0.0", func(t *testing.T) {
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", named}})
		d.API.As(system).MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers", nil)
		if got := started(t, d.Log).String(); got != "release=8.0.0 source=config enforce_scope=false enforce_new_defaults=false" {
			t.Errorf("start-up line: %s", got)
		}
		if strings.Contains(d.Log.String(), releaseWarning) {
			t.Errorf("a release the config names warned:\n%s", d.Log.String())
		}
	})
	t.Run("version names the release", func(t *testing.T) {
		if r := syncd.Exec(t, dir, "version", "--config", unnamed); r.Code != exitOK ||
			!strings.Contains(r.Stdout, "placement release: 15.0.0 (the binary's default; api.release: 15.0.0 or 8.0.0)\npolicy: enforce_scope=true enforce_new_defaults=true\n") {
			t.Errorf("version --config %s: exit %d:\n%s%s", unnamed, r.Code, r.Stdout, r.Stderr)
		}
		if r := syncd.Exec(t, dir, "version", "--config", named); r.Code != exitOK ||
			!strings.Contains(r.Stdout, "placement release: 8.0.0 (api.release in "+named+")\npolicy: enforce_scope=false enforce_new_defaults=false\n") {
			t.Errorf("version --config %s: exit %d:\n%s%s", named, r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("new binary, old config: the policy file stops start-up", func(t *testing.T) {
		r := syncd.Exec(t, dir, "serve", "--config", unnamed)
		if r.Code != exitUsage {
			t.Fatalf("exit %d, want %d:\n%s", r.Code, exitUsage, r.Stderr)
		}
		for _, want := range []string{
			filepath.Join(dir, "policy.yaml") + `:2: rule "placement:resource_providers:list" refers to undefined rule "system_reader_api" (a Placement 8.0.0 rule; api.release is 15.0.0)`,
			"api.release is not set: 15.0.0 is this binary's default",
			"policy.file_check: warn",
		} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
			}
		}
		if strings.Contains(r.Stderr, "database loaded") {
			t.Errorf("the store was opened before the policy file was refused:\n%s", r.Stderr)
		}
	})
	t.Run("new binary, old config, file_check warn: the release change is named", func(t *testing.T) {
		warn := upgradeConfig(t, ks, dir, "warn.yaml", "", "  file_check: warn\n")
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", warn}})
		log := d.Log.String()
		if got := started(t, d.Log).String(); got != "release=15.0.0 source=default enforce_scope=true enforce_new_defaults=true" {
			t.Errorf("start-up line: %s", got)
		}
		for _, want := range []string{
			releaseWarning + ": the database was last served under Placement 8.0.0",
			`Set api.release: \"8.0.0\" to keep the old behaviour (its enforcement defaults: policy.enforce_scope: false, policy.enforce_new_defaults: false)`,
			`"from":"8.0.0","to":"15.0.0"`,
			`policy.yaml:2: rule \"placement:resource_providers:list\" refers to undefined rule \"system_reader_api\"`,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
		m := d.API.Scrape(t, "/metrics")
		if !m.Is(1, "placement_syncd_api_release_changed", "from=8.0.0", "to=15.0.0") ||
			!m.Is(1, "placement_syncd_api_release_info", "release=15.0.0", "source=default", "enforce_scope=true", "enforce_new_defaults=true") {
			t.Errorf("release metrics:\n%s", m.Grep("placement_syncd_api_release"))
		}
		d.API.As(system).MustDo(t, http.StatusForbidden, http.MethodGet, "/resource_providers", nil)
	})
	t.Run("api.release 8.0.0 set: the token works again", func(t *testing.T) {
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", named}})
		d.API.As(system).MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers", nil)
		if strings.Contains(d.Log.String(), releaseWarning) {
			t.Errorf("a release the config names warned:\n%s", d.Log.String())
		}
		m := d.API.Scrape(t, "/metrics")
		if !m.Is(0, "placement_syncd_api_release_changed", "from=8.0.0", "to=8.0.0") {
			t.Errorf("release metrics:\n%s", m.Grep("placement_syncd_api_release"))
		}
	})
}

// TestUnrecordedRelease: a database with data that remembers no release
// (written before placement-syncd recorded one, when it followed
// Placement 8.0.0) warns under the default release until the config
// names one, which is then recorded; a new database records the default
// without a warning.
func TestUnrecordedRelease(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "placement.db")
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, "api:\n  listen: \"127.0.0.1:0\"\ndatabase:\n  path: \""+db+"\"\n")
	served := func(t *testing.T) string { return servedRelease(t, db) }
	t.Run("new database", func(t *testing.T) {
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", cfg}})
		d.API.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", map[string]string{"name": "rp1"})
		if strings.Contains(d.Log.String(), releaseWarning) {
			t.Errorf("a new database warned:\n%s", d.Log.String())
		}
	})
	if got := served(t); got != "15.0.0" {
		t.Fatalf("served release %q, want the default 15.0.0 recorded", got)
	}
	sqlExec(t, db, `DELETE FROM syncd_metadata`)
	t.Run("data, no release", func(t *testing.T) {
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", cfg}})
		if want := releaseWarning + ": the database holds data but records no served release: it was written by a placement-syncd that did not record it, which followed Placement 8.0.0"; !strings.Contains(d.Log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, d.Log.String())
		}
		if m := d.API.Scrape(t, "/metrics"); !m.Is(1, "placement_syncd_api_release_changed", "from=unknown", "to=15.0.0") {
			t.Errorf("release metrics:\n%s", m.Grep("placement_syncd_api_release"))
		}
	})
	if got := served(t); got != "" {
		t.Fatalf("served release %q recorded by default over data; want none until the config names one", got)
	}
	writeFile(t, cfg, "api:\n  listen: \"127.0.0.1:0\"\n  release: \"15.0.0\"\ndatabase:\n  path: \""+db+"\"\n")
	t.Run("named", func(t *testing.T) {
		d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", cfg}})
		if strings.Contains(d.Log.String(), releaseWarning) {
			t.Errorf("a release the config names warned:\n%s", d.Log.String())
		}
	})
	if got := served(t); got != "15.0.0" {
		t.Fatalf("served release %q, want 15.0.0 recorded once named", got)
	}
}

// servedRelease is the release the SQLite database at path remembers
// being served under ("" for none).
func servedRelease(t *testing.T, path string) string {
	t.Helper()
	h, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var v string
	if err := h.QueryRow(`SELECT value FROM syncd_metadata WHERE name = 'served_release'`).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return v
}

// sqlExec runs statements on the SQLite file at path.
func sqlExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
