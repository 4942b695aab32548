package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// KeystoneAuthTokenConfig is keystonemiddleware's [keystone_authtoken]
// (password plugin), used when api.auth_strategy is keystone.
type KeystoneAuthTokenConfig struct {
	// AuthURL is Keystone's endpoint, with or without /v3.
	AuthURL string `yaml:"auth_url"`
	// WWWAuthenticateURI is announced to clients in 401 answers; empty
	// means AuthURL.
	WWWAuthenticateURI string `yaml:"www_authenticate_uri"`
	// The service user that validates tokens, and its project.
	Username          string `yaml:"username"`
	Password          string `yaml:"password"`
	ProjectName       string `yaml:"project_name"`
	UserDomainName    string `yaml:"user_domain_name"`
	ProjectDomainName string `yaml:"project_domain_name"`
	// Timeout bounds each call to Keystone.
	Timeout time.Duration `yaml:"timeout"`
	// CacheSize bounds the validated-token cache (0 disables it).
	CacheSize int `yaml:"cache_size"`
	// CacheTTL is the longest a validation is reused; never past the
	// token's expiry.
	CacheTTL time.Duration `yaml:"cache_ttl"`
}

// PolicyConfig is oslo.policy's [oslo_policy].
type PolicyConfig struct {
	// File is an operator policy file (YAML or JSON); empty: defaults only.
	File string `yaml:"file"`
	// EnforceScope refuses tokens whose scope the rule does not allow.
	// Unset: the api.release's oslo.policy default (on for 15.0.0, off
	// for 8.0.0).
	EnforceScope *bool `yaml:"enforce_scope"`
	// EnforceNewDefaults drops the deprecated (legacy) rules. Unset: as
	// EnforceScope.
	EnforceNewDefaults *bool `yaml:"enforce_new_defaults"`
	// FileCheck is what 'serve' does with a policy file's findings
	// (rules naming undefined rules, rules of the other release; see
	// policy.Finding): "strict" refuses to start, "warn" logs each and
	// starts.
	FileCheck string `yaml:"file_check"`
}

// Values of policy.file_check.
const (
	FileCheckStrict = "strict"
	FileCheckWarn   = "warn"
)

// Enforcement is the effective enforce_scope and enforce_new_defaults
// under the release r.
func (p PolicyConfig) Enforcement(r release.Release) (scope, newDefaults bool) {
	scope, newDefaults = r.EnforceDefaults()
	if p.EnforceScope != nil {
		scope = *p.EnforceScope
	}
	if p.EnforceNewDefaults != nil {
		newDefaults = *p.EnforceNewDefaults
	}
	return scope, newDefaults
}

// CORSConfig is oslo.middleware's [cors].
type CORSConfig struct {
	AllowedOrigin    []string `yaml:"allowed_origin"`
	AllowCredentials bool     `yaml:"allow_credentials"`
	ExposeHeaders    []string `yaml:"expose_headers"`
	MaxAge           int      `yaml:"max_age"`
	AllowMethods     []string `yaml:"allow_methods"`
	AllowHeaders     []string `yaml:"allow_headers"`
}

var authStrategies = []string{"noauth2", "keystone"}

const (
	defaultKeystoneTimeout   = 10 * time.Second
	defaultKeystoneCacheSize = 1000
	defaultKeystoneCacheTTL  = 300 * time.Second
)

func defaultKeystoneAuthToken() KeystoneAuthTokenConfig {
	return KeystoneAuthTokenConfig{
		UserDomainName:    "Default",
		ProjectDomainName: "Default",
		Timeout:           defaultKeystoneTimeout,
		CacheSize:         defaultKeystoneCacheSize,
		CacheTTL:          defaultKeystoneCacheTTL,
	}
}

func defaultCORS() CORSConfig {
	d := placementsrv.DefaultCORSOptions()
	return CORSConfig{
		AllowedOrigin:    []string{},
		AllowCredentials: d.AllowCredentials,
		ExposeHeaders:    d.ExposeHeaders,
		MaxAge:           d.MaxAge,
		AllowMethods:     d.AllowMethods,
		AllowHeaders:     d.AllowHeaders,
	}
}

// checkAuth checks the auth, keystone_authtoken, policy and cors keys.
func checkAuth(c *Config, p *problems) {
	if !slices.Contains(authStrategies, c.API.AuthStrategy) {
		p.bad("api.auth_strategy", "unsupported value %q (supported: %s)", c.API.AuthStrategy, strings.Join(authStrategies, ", "))
	}
	k := c.KeystoneAuthToken
	if c.API.AuthStrategy == "keystone" {
		if err := httpURLError(k.AuthURL); err != nil {
			p.bad("keystone_authtoken.auth_url", "%v (required with api.auth_strategy keystone)", err)
		}
		if k.Username == "" {
			p.bad("keystone_authtoken.username", "must not be empty with api.auth_strategy keystone")
		}
	}
	if k.WWWAuthenticateURI != "" {
		if err := httpURLError(k.WWWAuthenticateURI); err != nil {
			p.bad("keystone_authtoken.www_authenticate_uri", "%v", err)
		}
	}
	if k.Timeout <= 0 {
		p.bad("keystone_authtoken.timeout", "must be positive, got %s", k.Timeout)
	}
	if k.CacheSize < 0 {
		p.bad("keystone_authtoken.cache_size", "must not be negative, got %d", k.CacheSize)
	}
	if k.CacheTTL <= 0 {
		p.bad("keystone_authtoken.cache_ttl", "must be positive, got %s", k.CacheTTL)
	}
	for _, o := range c.CORS.AllowedOrigin {
		if o == "" || (o != "*" && !strings.Contains(o, "://")) {
			p.bad("cors.allowed_origin", "invalid origin %q (expected <scheme>://<host>[:<port>] or *)", o)
		}
	}
	if c.Policy.FileCheck != FileCheckStrict && c.Policy.FileCheck != FileCheckWarn {
		p.bad("policy.file_check", "unsupported value %q (supported: %s, %s)", c.Policy.FileCheck, FileCheckStrict, FileCheckWarn)
	}
	if c.CORS.MaxAge < 0 {
		p.bad("cors.max_age", "must not be negative, got %d", c.CORS.MaxAge)
	}
}

// httpURLError says what is wrong with s as an http(s) URL, or nil.
func httpURLError(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: expected http(s)://host[:port][/path]", s)
	}
	return nil
}
