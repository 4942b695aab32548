package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/osloconf"
)

// PlacementConf is what 'serve --placement-conf' read from OpenStack
// Placement's placement.conf that its caller acts on; the rest of it is
// in the Config that Load returns.
type PlacementConf struct {
	Path string
	// Ignored are its options that mean nothing here ("section.key",
	// sorted), for the caller to log once.
	Ignored []string
	// Database is its [placement_database] connection while the
	// configuration uses it (neither the YAML nor a flag names another
	// database); nil otherwise.
	Database *ConfDatabase
}

// ConfDatabase is placement.conf's database connection and where it was
// read.
type ConfDatabase struct {
	URL   *dburl.URL
	file  *osloconf.File
	value osloconf.Value
}

// Bad is an error about the connection naming placement.conf's file,
// line, section and key.
func (c *ConfDatabase) Bad(format string, args ...any) error {
	return c.file.Bad(c.value, format, args...)
}

// placementConf is placement.conf read onto our defaults.
type placementConf struct {
	cfg Config
	PlacementConf
}

// confSetter applies one placement.conf option to cfg.
type confSetter func(pc *placementConf, f *osloconf.File, v osloconf.Value) error

// placementConfOptions maps the options we read, by section and key.
func placementConfOptions() map[string]map[string]confSetter {
	return map[string]map[string]confSetter{
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
}

// readPlacementConf applies placement.conf onto our defaults. Every bad
// value is reported, each naming file, line, section and key.
func readPlacementConf(path string) (*placementConf, error) {
	f, err := osloconf.Load(path)
	if err != nil {
		return nil, fmt.Errorf("read placement.conf: %w", err)
	}
	pc := &placementConf{cfg: Default(), PlacementConf: PlacementConf{Path: path}}
	options := placementConfOptions()
	ignored := map[string]bool{}
	var errs []error
	for _, v := range f.Values {
		set, ok := options[v.Section][strings.ToLower(v.Key)]
		if !ok {
			ignored[v.Section+"."+v.Key] = true
			continue
		}
		if err := set(pc, f, v); err != nil {
			errs = append(errs, f.Bad(v, "%v", err))
		}
	}
	for k := range ignored {
		pc.Ignored = append(pc.Ignored, k)
	}
	sort.Strings(pc.Ignored)
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
