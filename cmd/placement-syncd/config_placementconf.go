package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/osloconf"
)

// placementConf is what 'serve --placement-conf' took from OpenStack
// Placement's placement.conf: the configuration it describes (our
// defaults underneath), the options that mean nothing here, and its
// database connection, if it has one.
type placementConf struct {
	cfg     Config
	ignored []string // "section.key", sorted
	conn    *confConnection
}

// confSetter applies one placement.conf option to cfg.
type confSetter func(pc *placementConf, f *osloconf.File, v osloconf.Value) error

// placementConfOptions maps the options we read, by section and key.
var placementConfOptions = map[string]map[string]confSetter{
	"placement_database": {"connection": setConnection},
	"api":                {"auth_strategy": setString(func(c *Config) *string { return &c.API.AuthStrategy })},
	"keystone_authtoken": {
		"auth_url":             setString(func(c *Config) *string { return &c.KeystoneAuthToken.AuthURL }),
		"www_authenticate_uri": setString(func(c *Config) *string { return &c.KeystoneAuthToken.WWWAuthenticateURI }),
		"auth_uri":             setString(func(c *Config) *string { return &c.KeystoneAuthToken.WWWAuthenticateURI }),
		"username":             setString(func(c *Config) *string { return &c.KeystoneAuthToken.Username }),
		"password":             setString(func(c *Config) *string { return &c.KeystoneAuthToken.Password }),
		"project_name":         setString(func(c *Config) *string { return &c.KeystoneAuthToken.ProjectName }),
		"user_domain_name":     setString(func(c *Config) *string { return &c.KeystoneAuthToken.UserDomainName }),
		"project_domain_name":  setString(func(c *Config) *string { return &c.KeystoneAuthToken.ProjectDomainName }),
		"auth_type":            setAuthType,
		"http_connect_timeout": setSeconds(func(c *Config) *time.Duration { return &c.KeystoneAuthToken.Timeout }),
		"token_cache_time":     setSeconds(func(c *Config) *time.Duration { return &c.KeystoneAuthToken.CacheTTL }),
	},
	"oslo_policy": {
		"policy_file":          setPolicyFile,
		"enforce_scope":        setOptBool(func(c *Config) **bool { return &c.Policy.EnforceScope }),
		"enforce_new_defaults": setOptBool(func(c *Config) **bool { return &c.Policy.EnforceNewDefaults }),
	},
	"placement": {
		"max_allocation_candidates":                 setMaxCandidates,
		"allocation_candidates_generation_strategy": setStrategy,
		"randomize_allocation_candidates":           setBool(func(c *Config) *bool { return &c.API.AllocationCandidates.Randomize }),
	},
	"workarounds": {
		"optimize_for_wide_provider_trees": setBool(func(c *Config) *bool { return &c.API.AllocationCandidates.OptimizeForWideProviderTrees }),
	},
	"cors": {
		"allowed_origin":    setList(func(c *Config) *[]string { return &c.CORS.AllowedOrigin }),
		"allow_credentials": setBool(func(c *Config) *bool { return &c.CORS.AllowCredentials }),
		"expose_headers":    setList(func(c *Config) *[]string { return &c.CORS.ExposeHeaders }),
		"max_age":           setInt(func(c *Config) *int { return &c.CORS.MaxAge }),
		"allow_methods":     setList(func(c *Config) *[]string { return &c.CORS.AllowMethods }),
		"allow_headers":     setList(func(c *Config) *[]string { return &c.CORS.AllowHeaders }),
	},
	"DEFAULT": {"debug": setDebug},
}

// readPlacementConf applies placement.conf onto our defaults. Every bad
// value is reported, each naming file, line, section and key.
func readPlacementConf(path string) (*placementConf, error) {
	f, err := osloconf.Load(path)
	if err != nil {
		return nil, fmt.Errorf("read placement.conf: %w", err)
	}
	pc := &placementConf{cfg: DefaultConfig()}
	ignored := map[string]bool{}
	var errs []error
	for _, v := range f.Values {
		set, ok := placementConfOptions[v.Section][strings.ToLower(v.Key)]
		if !ok {
			ignored[v.Section+"."+v.Key] = true
			continue
		}
		if err := set(pc, f, v); err != nil {
			errs = append(errs, f.Bad(v, "%v", err))
		}
	}
	for k := range ignored {
		pc.ignored = append(pc.ignored, k)
	}
	sort.Strings(pc.ignored)
	return pc, errors.Join(errs...)
}

func setString(field func(*Config) *string) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		*field(&pc.cfg) = v.Text
		return nil
	}
}

func setBool(field func(*Config) *bool) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		b, err := osloconf.Bool(v)
		*field(&pc.cfg) = b
		return err
	}
}

// setOptBool sets a boolean whose absence means a default decided later.
func setOptBool(field func(*Config) **bool) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		b, err := osloconf.Bool(v)
		*field(&pc.cfg) = &b
		return err
	}
}

func setInt(field func(*Config) *int) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		n, err := osloconf.Int(v)
		if err == nil && n < 0 {
			err = fmt.Errorf("must not be negative, got %d", n)
		}
		*field(&pc.cfg) = n
		return err
	}
}

func setSeconds(field func(*Config) *time.Duration) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		n, err := osloconf.Int(v)
		if err == nil && n <= 0 {
			err = fmt.Errorf("must be a positive number of seconds, got %d", n)
		}
		*field(&pc.cfg) = time.Duration(n) * time.Second
		return err
	}
}

func setList(field func(*Config) *[]string) confSetter {
	return func(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
		*field(&pc.cfg) = osloconf.List(v)
		return nil
	}
}

// configureServe is configureLogged, over placement.conf when one is
// given: its options that mean nothing here are logged once.
func configureServe(yamlPath, confPath string, overrides []override, stderr io.Writer) (Config, *zap.Logger, error) {
	if confPath == "" {
		return configureLogged(yamlPath, overrides, stderr)
	}
	pc, err := readPlacementConf(confPath)
	if err != nil {
		return Config{}, nil, usageError{err}
	}
	cfg, overridden, err := overPlacementConf(pc, yamlPath, overrides)
	if err != nil {
		return cfg, nil, usageError{err}
	}
	if pc.conn != nil && !overridden {
		if err := pc.conn.refusePlacementOwn(); err != nil {
			return cfg, nil, err
		}
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return cfg, nil, usageError{err}
	}
	log.Info("configuration read from placement.conf", zap.String("file", confPath), zap.String("database", cfg.Database.name()),
		zap.String("auth_strategy", cfg.API.AuthStrategy))
	if len(pc.ignored) > 0 {
		log.Info("placement.conf options that mean nothing to placement-syncd, ignored", zap.String("file", confPath), zap.Strings("options", pc.ignored))
	}
	return cfg, log, nil
}

// overPlacementConf loads the YAML and flags over placement.conf's
// configuration. Our database, named by either, replaces placement.conf's
// connection as a whole: a YAML database.path alone drops a MySQL
// connection, as --db PATH does. overridden says whether it was replaced.
func overPlacementConf(pc *placementConf, yamlPath string, overrides []override) (Config, bool, error) {
	base := pc.cfg
	yamlPathSet, yamlConnSet := yamlSetsKey(yamlPath, "database", "path"), yamlSetsKey(yamlPath, "database", "connection")
	if yamlPathSet && !yamlConnSet {
		base.Database.Connection = ""
	}
	cfg, err := loadConfigOn(base, yamlPath, overrides)
	overridden := yamlPathSet || yamlConnSet || slices.ContainsFunc(overrides, func(o override) bool {
		return o.Key == "database.path" || o.Key == "database.connection"
	})
	return cfg, overridden, err
}
