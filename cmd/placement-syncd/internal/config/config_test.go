package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig_Testdata(t *testing.T) {
	good := map[string]func(*Config){
		"empty.good.yaml":         func(*Config) {},
		"comments-only.good.yaml": func(*Config) {},
		"partial.good.yaml":       func(c *Config) { c.API.Listen = "[::1]:8778" },
		"auth.good.yaml": func(c *Config) {
			c.API.AuthStrategy = "keystone"
			c.KeystoneAuthToken.AuthURL = "http://keystone.example.com:5000/v3"
			c.KeystoneAuthToken.Username, c.KeystoneAuthToken.Password = "placement", "secret"
			c.KeystoneAuthToken.ProjectName = "service"
			c.KeystoneAuthToken.CacheTTL = time.Minute
			c.Policy = PolicyConfig{File: "/etc/placement-syncd/policy.yaml", EnforceScope: ptr(true), EnforceNewDefaults: ptr(true), FileCheck: FileCheckWarn}
			c.CORS.AllowedOrigin = []string{"https://horizon.example.com"}
			c.CORS.AllowHeaders = []string{"OpenStack-API-Version"}
			c.CORS.MaxAge = 600
		},
		"capacity.good.yaml": func(c *Config) {
			c.Reconciler.Nova.File = "/var/lib/nova.json"
			c.Capacity = CapacityConfig{Enabled: true, Refresh: time.Minute, DefaultZone: "nova", PerHost: true, OSCapacityMetrics: true}
		},
		"full.good.yaml": func(c *Config) {
			c.API = APIConfig{Listen: "0.0.0.0:9000", AuthStrategy: "noauth2", AllowInsecureNoauth: true, ShutdownGrace: 90 * time.Second,
				ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 5 * time.Second, MaxConnections: 100,
				MaxMicroversion: "1.39", Release: "15.0.0",
				AllocationCandidates: CandidatesConfig{Randomize: true, MaxCandidates: 5000, Order: "round-robin"}}
			c.Database = DatabaseConfig{Path: "/var/lib/placement-syncd/placement.db", BusyTimeout: 250 * time.Millisecond, AutoMigrate: false, ChangeFeed: defaultChangeFeedConfig()}
			c.Log = LogConfig{Level: "debug", Format: "console"}
			c.Metrics = MetricsConfig{Enabled: true, Listen: "0.0.0.0:9778", OpenStackCompat: false}
		},
	}
	bad := map[string]string{
		"unknown-key.bad.yaml":          `testdata/unknown-key.bad.yaml:3: unknown key "listn" in section "api" (known: listen, auth_strategy, allow_insecure_noauth, shutdown_grace, read_timeout, write_timeout, idle_timeout, max_connections, max_microversion, release, allocation_candidates)`,
		"unknown-section.bad.yaml":      `testdata/unknown-section.bad.yaml:3: unknown key "metric" at the top level (known: api, database, log, agent, metrics, keystone_authtoken, policy, cors, reconciler, capacity)`,
		"bad-metrics-listen.bad.yaml":   `testdata/bad-metrics-listen.bad.yaml:2: metrics.listen: invalid address "localhost": missing port in address`,
		"metrics-listen-api.bad.yaml":   `testdata/metrics-listen-api.bad.yaml:4: metrics.listen: "127.0.0.1:8778" is api.listen; leave metrics.listen empty to serve /metrics on the API listener`,
		"bad-metrics-compat.bad.yaml":   `testdata/bad-metrics-compat.bad.yaml:3: metrics.openstack_compat: invalid value "yes please": expected true or false`,
		"bad-listen.bad.yaml":           `testdata/bad-listen.bad.yaml:3: api.listen: invalid address "localhost": missing port in address`,
		"bad-port.bad.yaml":             `testdata/bad-port.bad.yaml:2: api.listen: invalid address "127.0.0.1:http": port "http" is not a number from 0 to 65535`,
		"bad-duration.bad.yaml":         `testdata/bad-duration.bad.yaml:2: api.shutdown_grace: invalid value "ten seconds": expected a duration such as "10s" or "1m30s"`,
		"bad-candidates-order.bad.yaml": `testdata/bad-candidates-order.bad.yaml:4: api.allocation_candidates.order: invalid order "random" (one of depth-first, breadth-first, round-robin)`,
		"bad-bool.bad.yaml":             `testdata/bad-bool.bad.yaml:3: database.auto_migrate: invalid value "sometimes": expected true or false`,
		"bad-auth.bad.yaml":             `testdata/bad-auth.bad.yaml:2: api.auth_strategy: unsupported value "kerberos" (supported: noauth2, keystone)`,
		"keystone-incomplete.bad.yaml": `testdata/keystone-incomplete.bad.yaml:4: keystone_authtoken.auth_url: invalid URL "keystone.example.com:5000": expected http(s)://host[:port][/path] (required with api.auth_strategy keystone)` + "\n" +
			`keystone_authtoken.username: must not be empty with api.auth_strategy keystone` + "\n" +
			`testdata/keystone-incomplete.bad.yaml:5: keystone_authtoken.cache_size: must not be negative, got -1` + "\n" +
			`testdata/keystone-incomplete.bad.yaml:7: cors.allowed_origin: invalid origin "horizon.example.com" (expected <scheme>://<host>[:<port>] or *)`,
		"bad-level.bad.yaml":      `testdata/bad-level.bad.yaml:2: log.level: invalid level "verbose" (one of debug, info, warn, error)`,
		"bad-format.bad.yaml":     `testdata/bad-format.bad.yaml:2: log.format: invalid format "text" (one of json, console)`,
		"negative-busy.bad.yaml":  `testdata/negative-busy.bad.yaml:2: database.busy_timeout: must be positive, got -1s`,
		"empty-path.bad.yaml":     `testdata/empty-path.bad.yaml:2: database.path: must not be empty`,
		"section-scalar.bad.yaml": `testdata/section-scalar.bad.yaml:1: api: invalid value "127.0.0.1:8778": expected a mapping of keys`,
		"value-mapping.bad.yaml":  `testdata/value-mapping.bad.yaml:3: api.listen: invalid value (a mapping): expected a string`,
		"duplicate.bad.yaml":      `testdata/duplicate.bad.yaml:3: duplicate key "level" in section "log" (first at line 2)`,
		"syntax.bad.yaml":         `testdata/syntax.bad.yaml:2: found unexpected end of stream`,
		"top-list.bad.yaml":       `testdata/top-list.bad.yaml:1: the top level must be a mapping of sections (api, database, log)`,
		"two-documents.bad.yaml":  `testdata/two-documents.bad.yaml:3: only one YAML document is allowed`,
		"file-check.bad.yaml":     `testdata/file-check.bad.yaml:3: policy.file_check: unsupported value "lenient" (supported: strict, warn)`,
		"noauth-exposed.bad.yaml": `testdata/noauth-exposed.bad.yaml:2: api.listen: "0.0.0.0:8778" is reachable beyond loopback with api.auth_strategy noauth2, where any client can claim to be admin: ` +
			`set api.auth_strategy to keystone, listen on 127.0.0.1, or accept the risk with api.allow_insecure_noauth: true` + "\n" +
			`testdata/noauth-exposed.bad.yaml:6: reconciler.listen: ":8779" is reachable beyond loopback but reconciler.token is empty: set a token, or listen on 127.0.0.1` + "\n" +
			`testdata/noauth-exposed.bad.yaml:10: agent.local.listen: "[::]:8780" is reachable beyond loopback but agent.local.token is empty: set a token, or listen on 127.0.0.1`,
		"placeholder.bad.yaml": `testdata/placeholder.bad.yaml:5: reconciler.token: "change-me" is a placeholder: set a secret of your own` + "\n" +
			`testdata/placeholder.bad.yaml:8: agent.service_token: "<token>" is a placeholder: set a secret of your own` + "\n" +
			`testdata/placeholder.bad.yaml:11: keystone_authtoken.password: "Change_Me_Too" is a placeholder: set a secret of your own`,
		"capacity.bad.yaml": `testdata/capacity.bad.yaml:3: capacity.refresh: must be positive, got 0s` + "\n" +
			`testdata/capacity.bad.yaml:4: capacity.default_zone: must not be empty` + "\n" +
			`testdata/capacity.bad.yaml:2: capacity.enabled: capacity by flavor reads Nova's flavors and aggregates: set reconciler.nova.file, endpoint or cloud`,
		"bad-limits.bad.yaml": `testdata/bad-limits.bad.yaml:2: api.read_timeout: must be positive, got 0s` + "\n" +
			`testdata/bad-limits.bad.yaml:3: api.max_connections: must be at least 1, got 0`,
		"two-errors.bad.yaml": `testdata/two-errors.bad.yaml:2: api.listen: invalid address "nope": missing port in address` + "\n" +
			`testdata/two-errors.bad.yaml:4: log.level: invalid level "loud" (one of debug, info, warn, error)`,
	}

	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		_, isGood := good[name]
		_, isBad := bad[name]
		if !isGood && !isBad {
			t.Errorf("%s has no expectation in this test", f)
		}
	}

	for name, edit := range good {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := loadConfig(filepath.Join("testdata", name), nil)
			if err != nil {
				t.Fatalf("loadConfig: %v", err)
			}
			want := Default()
			edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
	for name, want := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := loadConfig(filepath.Join("testdata", name), nil)
			if err == nil {
				t.Fatal("loadConfig succeeded, want an error")
			}
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
}

// TestLoadConfig_Samples loads every shipped config, and checks that the
// annotated sample documents exactly the built-in defaults. A sample may
// fail only on the settings an operator must fill in (loadSample), and
// once they are filled in it must bind safely (checkSafeBinding). The
// clouds.yaml entries they name are the operator's: testdata has them.
func TestLoadConfig_Samples(t *testing.T) {
	t.Setenv("OS_CLIENT_CONFIG_FILE", "testdata/clouds/clouds.yaml")
	files, err := filepath.Glob("../../../../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no files in configs/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg := loadSample(t, f)
			if filepath.Base(f) == "placement-syncd.yaml" && !reflect.DeepEqual(cfg, Default()) {
				t.Errorf("the sample differs from the defaults:\n got %+v\nwant %+v", cfg, Default())
			}
			checkSafeBinding(t, f, cfg)
		})
	}
}

func TestLoadConfig_Overrides(t *testing.T) {
	listen := func(v string) Override {
		return Override{Key: "api.listen", Flag: "--listen", Set: func(c *Config) { c.API.Listen = v }}
	}
	tests := []struct {
		name    string
		file    string
		over    []Override
		want    func(*Config)
		wantErr string
	}{
		{name: "flag wins over file", file: "testdata/full.good.yaml", over: []Override{listen("127.0.0.1:1")},
			want: func(c *Config) { c.API.Listen = "127.0.0.1:1" }},
		{name: "flag without file", over: []Override{listen("127.0.0.1:0")},
			want: func(c *Config) { c.API.Listen = "127.0.0.1:0" }},
		{name: "bad flag value names the flag", file: "testdata/full.good.yaml", over: []Override{listen("nowhere")},
			wantErr: `flag --listen: invalid address "nowhere": missing port in address`},
		{name: "flag fixes a bad file value", file: "testdata/bad-listen.bad.yaml", over: []Override{listen("127.0.0.1:0")},
			want: func(c *Config) { c.API.Listen = "127.0.0.1:0" }},
		{name: "missing file", file: "testdata/does-not-exist.yaml",
			wantErr: "read config: open testdata/does-not-exist.yaml: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadConfig(tt.file, tt.over)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			if tt.file != "" {
				if want, err = loadConfig(tt.file, nil); err != nil && !strings.Contains(tt.file, ".bad.") {
					t.Fatal(err)
				}
			}
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8778": true, "0.0.0.0:8778": true, ":8778": true, "[::]:8778": true,
		"localhost:0": true, "localhost": false, "1.2.3.4:99999": false, "a b:1": false, "": false,
	} {
		if err := listenError(addr); (err == nil) != ok {
			t.Errorf("listenError(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestReadmeAndCIRunTheSameTests(t *testing.T) {
	const cmd = "./scripts/test"
	for _, f := range []string{"../../../../README.md", "../../../../.ci/run"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), cmd) {
			t.Errorf("%s does not contain %q", f, cmd)
		}
	}
}

func ptr[T any](v T) *T { return &v }
