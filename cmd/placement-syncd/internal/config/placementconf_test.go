package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// devstackConf is placement.conf as devstack writes it, on the database
// connection names (testdata/devstack-placement.conf).
func devstackConf(t *testing.T, connection string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "devstack-placement.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "CONNECTION", connection, 1)
}

func TestPlacementConf_Devstack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "placement.conf")
	writeFile(t, path, devstackConf(t, "sqlite:///"+filepath.Join(dir, "placement.db")))
	pc, err := readPlacementConf(path)
	if err != nil {
		t.Fatal(err)
	}
	c := pc.cfg
	checks := map[string][2]any{
		"database.path":         {c.Database.Path, filepath.Join(dir, "placement.db")},
		"auth_strategy":         {c.API.AuthStrategy, "keystone"},
		"auth_url":              {c.KeystoneAuthToken.AuthURL, "http://10.0.0.5/identity"},
		"username":              {c.KeystoneAuthToken.Username, "placement"},
		"project_name":          {c.KeystoneAuthToken.ProjectName, "service"},
		"enforce_scope":         {*c.Policy.EnforceScope, true},
		"enforce_new_defaults":  {*c.Policy.EnforceNewDefaults, true},
		"max_candidates":        {c.API.AllocationCandidates.MaxCandidates, 1000},
		"order":                 {c.API.AllocationCandidates.Order, "breadth-first"},
		"log.level":             {c.Log.Level, "debug"},
		"cors.allowed_origin[]": {strings.Join(c.CORS.AllowedOrigin, ","), "https://dashboard.example"},
	}
	for name, got := range checks {
		if got[0] != got[1] {
			t.Errorf("%s: got %v, want %v", name, got[0], got[1])
		}
	}
	want := "DEFAULT.logging_exception_prefix DEFAULT.use_syslog keystone_authtoken.cafile keystone_authtoken.interface " +
		"keystone_authtoken.memcached_servers placement_database.max_pool_size placement_database.sync_on_startup"
	if got := strings.Join(pc.Ignored, " "); got != want {
		t.Errorf("ignored: got %s\nwant %s", got, want)
	}
}

func TestPlacementConf_BadValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "placement.conf")
	writeFile(t, path, `[placement_database]
connection = postgresql://x/y
[oslo_policy]
enforce_scope = sometimes
[placement]
max_allocation_candidates = lots
allocation_candidates_generation_strategy = sideways
[keystone_authtoken]
auth_type = token
[workarounds]
optimize_for_wide_provider_trees = maybe
`)
	_, err := readPlacementConf(path)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		path + `:2: [placement_database] connection: database URL "postgresql://x/y": unsupported scheme "postgresql"`,
		path + `:4: [oslo_policy] enforce_scope: invalid boolean "sometimes"`,
		path + `:6: [placement] max_allocation_candidates: invalid integer "lots"`,
		path + `:7: [placement] allocation_candidates_generation_strategy: invalid value "sideways"`,
		path + `:9: [keystone_authtoken] auth_type: unsupported auth_type "token"`,
		path + `:11: [workarounds] optimize_for_wide_provider_trees: invalid boolean "maybe"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// Placement 15.0.0's allocation candidate options: any negative cap is
// none, and 0 still lets one candidate through (it stops once it holds
// at least that many); the strategies keep their names.
func TestPlacementConf_CandidateOptions(t *testing.T) {
	for _, c := range []struct {
		conf  string
		max   int
		order string
		wide  bool
	}{
		{"", 0, "depth-first", false},
		{"[placement]\nmax_allocation_candidates = -1\n", 0, "depth-first", false},
		{"[placement]\nmax_allocation_candidates = -7\n", 0, "depth-first", false},
		{"[placement]\nmax_allocation_candidates = 0\n", 1, "depth-first", false},
		{"[placement]\nmax_allocation_candidates = 1000\nallocation_candidates_generation_strategy = breadth-first\n", 1000, "breadth-first", false},
		{"[placement]\nallocation_candidates_generation_strategy = depth-first\n[workarounds]\noptimize_for_wide_provider_trees = True\n", 0, "depth-first", true},
	} {
		path := filepath.Join(t.TempDir(), "placement.conf")
		writeFile(t, path, c.conf)
		pc, err := readPlacementConf(path)
		if err != nil {
			t.Fatalf("%q: %v", c.conf, err)
		}
		ac := pc.cfg.API.AllocationCandidates
		if ac.Cap() != c.max || ac.Order != c.order || ac.OptimizeForWideProviderTrees != c.wide {
			t.Errorf("%q: got cap %d order %s wide %t, want %d %s %t", c.conf, ac.Cap(), ac.Order, ac.OptimizeForWideProviderTrees, c.max, c.order, c.wide)
		}
		if slices.Contains(pc.Ignored, "workarounds.optimize_for_wide_provider_trees") {
			t.Errorf("%q: the workaround is ignored", c.conf)
		}
	}
}

// Our YAML's allocation_candidates keys: 15.0.0's names, -1 for no cap,
// and errors naming file, line and key.
func TestLoadConfig_CandidateOptions(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "api:\n  allocation_candidates:\n    max_candidates: -1\n    order: breadth-first\n    optimize_for_wide_provider_trees: true\n")
	cfg, err := loadConfig(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ac := cfg.API.AllocationCandidates; ac.Cap() != 0 || ac.Order != "breadth-first" || !ac.OptimizeForWideProviderTrees {
		t.Errorf("got %+v", ac)
	}
	for body, want := range map[string]string{
		"    max_candidates: -2\n":                      `:3: api.allocation_candidates.max_candidates: must be -1 or 0 (no cap) or positive, got -2`,
		"    order: sideways\n":                         `:3: api.allocation_candidates.order: invalid order "sideways" (one of depth-first, breadth-first, round-robin)`,
		"    optimize_for_wide_provider_trees: often\n": `:3: api.allocation_candidates.optimize_for_wide_provider_trees: invalid value "often"`,
	} {
		bad := filepath.Join(dir, "bad.yaml")
		writeFile(t, bad, "api:\n  allocation_candidates:\n"+body)
		if _, err := loadConfig(bad, nil); err == nil || !strings.Contains(err.Error(), bad+want) {
			t.Errorf("error lacks %q:\n%v", bad+want, err)
		}
	}
}

// A MySQL connection is our database.connection; our YAML or --db,
// naming a database either way, replaces it, and the YAML overrides the
// rest of placement.conf key by key.
func TestPlacementConf_MySQLAndYAMLOverride(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	const conn = "mysql+pymysql://root:secret@127.0.0.1:1/placement?charset=utf8&plugin=dbcounter"
	writeFile(t, conf, devstackConf(t, conn))
	cfg, pc, err := Load(Sources{PlacementConf: conf})
	if err != nil {
		t.Fatal(err)
	}
	u, err := cfg.Database.URL()
	if err != nil || cfg.Database.Connection != conn || !strings.HasPrefix(u.String(), "mysql+pymysql://root:***@127.0.0.1:1/placement?") ||
		strings.Contains(u.String(), "secret") || pc.Database == nil || pc.Database.URL.String() != u.String() {
		t.Errorf("placement.conf's MySQL connection: %+v, named %s (%v), placement.conf's %+v", cfg.Database, u, err, pc.Database)
	}
	yml := filepath.Join(dir, "ours.yaml")
	writeFile(t, yml, "database:\n  path: "+filepath.Join(dir, "ours.db")+"\napi:\n  auth_strategy: noauth2\n")
	cfg, pc, err = Load(Sources{PlacementConf: conf, YAML: yml})
	if err != nil {
		t.Fatal(err)
	}
	if pc.Database != nil {
		t.Errorf("placement.conf's database still in use under the YAML's: %+v", pc.Database)
	}
	if cfg.Database.Path != filepath.Join(dir, "ours.db") || cfg.Database.Connection != "" || cfg.API.AuthStrategy != "noauth2" || cfg.Policy.EnforceScope == nil || !*cfg.Policy.EnforceScope {
		t.Errorf("YAML over placement.conf: %+v %+v %+v", cfg.Database, cfg.API.AuthStrategy, cfg.Policy)
	}
	const ours = "mysql://ours@127.0.0.1:1/ours"
	db := Override{Key: "database.connection", Flag: "--db", Set: func(c *Config) { c.Database.Connection = ours }}
	if cfg, _, err = Load(Sources{PlacementConf: conf, YAML: yml, Overrides: []Override{db}}); err != nil || cfg.Database.Connection != ours {
		t.Fatalf("--db URL over placement.conf and YAML: %+v %v", cfg.Database, err)
	}
}
