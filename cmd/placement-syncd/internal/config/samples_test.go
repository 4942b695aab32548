package config

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fillIns are the settings a sample may leave for the operator, with a
// value each that a test can fill in. Only these may make a shipped
// config fail to load.
var fillIns = map[string]func(*Config){
	"reconciler.token":            func(c *Config) { c.Reconciler.Token = "T0ken-of-the-test" },
	"reconciler.placement.token":  func(c *Config) { c.Reconciler.Placement.Token = "T0ken-of-the-test" },
	"reconciler.nova.token":       func(c *Config) { c.Reconciler.Nova.Token = "T0ken-of-the-test" },
	"agent.local.token":           func(c *Config) { c.Agent.Local.Token = "T0ken-of-the-test" },
	"agent.placement.token":       func(c *Config) { c.Agent.Placement.Token = "T0ken-of-the-test" },
	"agent.service_token":         func(c *Config) { c.Agent.ServiceToken = "T0ken-of-the-test" },
	"agent.ironic.token":          func(c *Config) { c.Agent.Ironic.Token = "T0ken-of-the-test" },
	"keystone_authtoken.password": func(c *Config) { c.KeystoneAuthToken.Password = "Passw0rd-of-the-test" },
	"keystone_authtoken.auth_url": func(c *Config) { c.KeystoneAuthToken.AuthURL = "https://keystone.example.com:5000/v3" },
}

var sampleErrorRE = regexp.MustCompile(`^(\S+):(\d+): ([a-z_.]+): (.+)$`)

// loadSample loads a shipped config. Each error it gives must name the
// file, the line and a key of fillIns; the config with those filled in
// must then be valid. It returns the filled-in config.
func loadSample(t *testing.T, path string) Config {
	t.Helper()
	cfg, err := loadConfig(path, nil)
	if err == nil {
		return cfg
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		m := sampleErrorRE.FindStringSubmatch(line)
		if m == nil || m[1] != path {
			t.Errorf("error without file, line and key: %s", line)
			continue
		}
		fill, ok := fillIns[m[3]]
		if !ok {
			t.Errorf("a shipped config may only leave secrets and Keystone's address to fill in: %s", line)
			continue
		}
		fill(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("still invalid once filled in: %v", err)
	}
	return cfg
}

// checkSafeBinding: noauth2 serves loopback only and never by the
// insecure Override, and every token-checked endpoint beyond loopback
// has a token.
func checkSafeBinding(t *testing.T, path string, cfg Config) {
	t.Helper()
	if cfg.API.AllowInsecureNoauth {
		t.Errorf("%s sets api.allow_insecure_noauth", path)
	}
	if cfg.API.AuthStrategy == "noauth2" && !IsLoopback(cfg.API.Listen) {
		t.Errorf("%s: noauth2 API on %s, beyond loopback", path, cfg.API.Listen)
	}
	if cfg.Reconciler.Enabled && cfg.Reconciler.Token == "" && !IsLoopback(cfg.Reconciler.Listen) {
		t.Errorf("%s: reconciler endpoint on %s without a token", path, cfg.Reconciler.Listen)
	}
	if cfg.Agent.Local.Listen != "" && cfg.Agent.Local.Token == "" && !IsLoopback(cfg.Agent.Local.Listen) {
		t.Errorf("%s: agent local endpoint on %s without a token", path, cfg.Agent.Local.Listen)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8778": true, "127.1.2.3:1": true, "[::1]:8778": true, "localhost:0": true, "LOCALHOST:1": true,
		"0.0.0.0:8778": false, ":8778": false, "[::]:8778": false, "10.0.0.1:8778": false,
		"placement.example.com:8778": false, "localhost.example.com:1": false, "nope": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestSample_EveryKey holds configs/placement-syncd.yaml to its promise,
// "every option, with its default value": each key of Default() is in it
// (the yaml tags of Config walked, a map's keys being the names its
// default holds), each key in it is a key of Config, and each value is
// the default but for the fill-ins.
func TestSample_EveryKey(t *testing.T) {
	inSample := map[string]*sampleEntry{}
	for _, e := range readSample(t).root.leaves() {
		inSample[e.name()] = e
	}
	for _, k := range defaultKeys() {
		e, ok := inSample[k.name]
		delete(inSample, k.name)
		switch {
		case !ok:
			t.Errorf("%s lacks %s: add it with its default, %s, and a comment above it saying what it does", sampleName, k.name, formatValue(k.def))
			continue
		case fillIns[k.name] != nil:
			continue
		}
		got := reflect.New(k.typ)
		if err := e.value.Decode(got.Interface()); err != nil {
			t.Errorf("%s:%d: %s: %v", sampleName, e.key.Line, k.name, err)
		} else if !sameValue(got.Elem(), k.def) {
			t.Errorf("%s:%d: %s is %s, but its default is %s", sampleName, e.key.Line, k.name, formatValue(got.Elem()), formatValue(k.def))
		}
	}
	extra := slices.Sorted(maps.Keys(inSample))
	for _, name := range extra {
		t.Errorf("%s:%d: %s is not a key of the configuration", sampleName, inSample[name].key.Line, name)
	}
}
