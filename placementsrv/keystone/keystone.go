// Package keystone validates OpenStack Identity (Keystone v3) tokens the
// way keystonemiddleware's auth_token does: the service authenticates
// itself with a password to get its own token, then asks Keystone about
// each user token (GET /v3/auth/tokens with X-Subject-Token). Answers
// are cached in a bounded LRU for at most the cache TTL and never past
// the token's own expiry.
package keystone

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrInvalidToken means the token is missing, unknown, revoked, expired
// or unreadable: the request gets a 401.
var ErrInvalidToken = errors.New("keystone: invalid token")

// ErrUnavailable means Keystone could not be asked or answered with an
// error: the request gets a 503.
var ErrUnavailable = errors.New("keystone: identity service unavailable")

// Options configures a Client, as keystonemiddleware's
// [keystone_authtoken] password options.
type Options struct {
	// AuthURL is Keystone's public endpoint, with or without "/v3".
	AuthURL string
	// Username, Password, UserDomainName: the service user.
	Username, Password, UserDomainName string
	// ProjectName and ProjectDomainName scope the service token.
	ProjectName, ProjectDomainName string
	// Timeout bounds each call to Keystone (default 10s).
	Timeout time.Duration
	// CacheSize bounds the number of cached tokens (default 1000; a
	// negative value disables the cache).
	CacheSize int
	// CacheTTL is the longest a validation is reused (default 300s, as
	// token_cache_time).
	CacheTTL time.Duration
	// InvalidCacheTTL is how long a token Keystone refused is refused
	// again without asking (default 10s), so that a client repeating a
	// junk token costs one Keystone call, not one per request. It is
	// short: a token issued just after the refusal is unlikely, but
	// possible. The refusals are cached, bounded by CacheSize, by the
	// token's SHA-256 (a junk token can be long).
	InvalidCacheTTL time.Duration
	// HTTPClient is used for all calls; nil means a client with Timeout.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Token is what Keystone says about a valid token.
type Token struct {
	UserID, UserName, UserDomainID, UserDomainName             string
	ProjectID, ProjectName, ProjectDomainID, ProjectDomainName string
	// DomainID and DomainName are set for a domain-scoped token.
	DomainID, DomainName string
	// SystemAll is true for a token scoped to the whole system.
	SystemAll bool
	Roles     []string
	// IsAdminProject is Keystone's is_admin_project, true when absent.
	IsAdminProject bool
	ExpiresAt      time.Time
}

// Client validates tokens. It is safe for concurrent use.
type Client struct {
	opts    Options
	base    string
	http    *http.Client
	now     func() time.Time
	cache   *lru
	invalid *lru // refused tokens, by SHA-256
	authMu  sync.Mutex
	svcTok  string
	svcExp  time.Time
	metrics stats
	statsMu sync.Mutex
}

// stats counts Keystone calls, for tests. InvalidHits
// counts refusals answered from the invalid-token cache.
type stats struct {
	ServiceAuths, Validations, CacheHits, InvalidHits int
}

// New checks opts and builds a Client; it does not contact Keystone.
func New(opts Options) (*Client, error) {
	if opts.AuthURL == "" {
		return nil, errors.New("keystone: auth_url is required")
	}
	if opts.Username == "" {
		return nil, errors.New("keystone: username is required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = 1000
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 300 * time.Second
	}
	if opts.InvalidCacheTTL <= 0 {
		opts.InvalidCacheTTL = 10 * time.Second
	}
	if opts.UserDomainName == "" {
		opts.UserDomainName = "Default"
	}
	if opts.ProjectDomainName == "" {
		opts.ProjectDomainName = "Default"
	}
	c := &Client{opts: opts, base: v3Base(opts.AuthURL), http: opts.HTTPClient, now: opts.Now}
	if c.http == nil {
		c.http = &http.Client{Timeout: opts.Timeout}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if opts.CacheSize > 0 {
		c.cache = newLRU(opts.CacheSize)
		c.invalid = newLRU(opts.CacheSize)
	}
	return c, nil
}

// v3Base is the v3 API root for an auth URL given with or without "/v3".
func v3Base(u string) string {
	u = strings.TrimRight(u, "/")
	if strings.HasSuffix(u, "/v3") {
		return u
	}
	return u + "/v3"
}

// stats returns the call counters.
func (c *Client) stats() stats {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.metrics
}

func (c *Client) count(f func(*stats)) {
	c.statsMu.Lock()
	f(&c.metrics)
	c.statsMu.Unlock()
}

// Validate returns what Keystone says about token, from the cache when a
// fresh answer is there.
func (c *Client) Validate(ctx context.Context, token string) (*Token, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, ErrInvalidToken
	}
	now := c.now()
	var digest string
	if c.cache != nil {
		if t, ok := c.cache.get(token, now); ok {
			c.count(func(s *stats) { s.CacheHits++ })
			return t, nil
		}
		sum := sha256.Sum256([]byte(token))
		digest = string(sum[:])
		if _, refused := c.invalid.get(digest, now); refused {
			c.count(func(s *stats) { s.InvalidHits++ })
			return nil, ErrInvalidToken
		}
	}
	t, err := c.validate(ctx, token, true)
	if err == nil && !t.ExpiresAt.After(now) {
		err = ErrInvalidToken
	}
	if err != nil {
		// Only Keystone's own refusal is remembered, never an outage.
		if c.cache != nil && errors.Is(err, ErrInvalidToken) {
			c.invalid.put(digest, nil, now.Add(c.opts.InvalidCacheTTL))
		}
		return nil, err
	}
	if c.cache != nil {
		until := now.Add(c.opts.CacheTTL)
		if t.ExpiresAt.Before(until) {
			until = t.ExpiresAt
		}
		c.cache.put(token, t, until)
	}
	return t, nil
}

// validate asks Keystone once, re-authenticating the service and asking
// again if Keystone rejects the service token.
func (c *Client) validate(ctx context.Context, token string, retry bool) (*Token, error) {
	svc, err := c.serviceToken(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/auth/tokens?nocatalog", nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("X-Auth-Token", svc)
	req.Header.Set("X-Subject-Token", token)
	req.Header.Set("Accept", "application/json")
	c.count(func(s *stats) { s.Validations++ })
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: validate token: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: read token: %v", ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		t, err := parseToken(body)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
		return t, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrInvalidToken
	case resp.StatusCode == http.StatusUnauthorized:
		c.forgetServiceToken(svc)
		if retry {
			return c.validate(ctx, token, false)
		}
		return nil, fmt.Errorf("%w: Keystone rejected the service credentials", ErrUnavailable)
	}
	return nil, fmt.Errorf("%w: validate token: Keystone answered %s", ErrUnavailable, resp.Status)
}

// staleMargin re-authenticates the service this long before its token
// expires, as keystoneauth does.
const staleMargin = 30 * time.Second

// serviceToken returns the service's own token, authenticating with the
// password when there is none or it is about to expire.
func (c *Client) serviceToken(ctx context.Context) (string, error) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.svcTok != "" && c.now().Add(staleMargin).Before(c.svcExp) {
		return c.svcTok, nil
	}
	tok, exp, err := c.authenticate(ctx)
	if err != nil {
		return "", err
	}
	c.svcTok, c.svcExp = tok, exp
	return tok, nil
}

func (c *Client) forgetServiceToken(tok string) {
	c.authMu.Lock()
	if c.svcTok == tok {
		c.svcTok = ""
	}
	c.authMu.Unlock()
}

// authRequest is Keystone's password authentication body.
type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					Name     string     `json:"name"`
					Password string     `json:"password"`
					Domain   authDomain `json:"domain"`
				} `json:"user"`
			} `json:"password"`
		} `json:"identity"`
		Scope *authScope `json:"scope,omitempty"`
	} `json:"auth"`
}

// authDomain names the domain of a user or a project.
type authDomain struct {
	Name string `json:"name"`
}

// authScope scopes the token to a project.
type authScope struct {
	Project struct {
		Name   string     `json:"name"`
		Domain authDomain `json:"domain"`
	} `json:"project"`
}

// authenticate performs password authentication (POST /v3/auth/tokens).
func (c *Client) authenticate(ctx context.Context) (string, time.Time, error) {
	var ar authRequest
	ar.Auth.Identity.Methods = []string{"password"}
	u := &ar.Auth.Identity.Password.User
	u.Name, u.Password, u.Domain.Name = c.opts.Username, c.opts.Password, c.opts.UserDomainName
	if c.opts.ProjectName != "" {
		ar.Auth.Scope = &authScope{}
		ar.Auth.Scope.Project.Name = c.opts.ProjectName
		ar.Auth.Scope.Project.Domain.Name = c.opts.ProjectDomainName
	}
	body, _ := json.Marshal(ar)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/auth/tokens", bytes.NewReader(body))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c.count(func(s *stats) { s.ServiceAuths++ })
	resp, err := c.http.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: authenticate service user: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: authenticate service user: %v", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", time.Time{}, fmt.Errorf("%w: authenticate service user %q: Keystone answered %s", ErrUnavailable, c.opts.Username, resp.Status)
	}
	tok := resp.Header.Get("X-Subject-Token")
	t, err := parseToken(data)
	if tok == "" || err != nil {
		return "", time.Time{}, fmt.Errorf("%w: authenticate service user: unreadable answer", ErrUnavailable)
	}
	return tok, t.ExpiresAt, nil
}

type ref struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Domain *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"domain"`
}

type tokenBody struct {
	Token *struct {
		ExpiresAt      string          `json:"expires_at"`
		User           *ref            `json:"user"`
		Project        *ref            `json:"project"`
		Domain         *ref            `json:"domain"`
		System         map[string]bool `json:"system"`
		Roles          []ref           `json:"roles"`
		IsAdminProject *bool           `json:"is_admin_project"`
	} `json:"token"`
}

// parseToken reads Keystone's token document.
func parseToken(data []byte) (*Token, error) {
	var tb tokenBody
	if err := json.Unmarshal(data, &tb); err != nil {
		return nil, fmt.Errorf("token document: %w", err)
	}
	if tb.Token == nil || tb.Token.User == nil || tb.Token.User.ID == "" {
		return nil, errors.New("token document has no user")
	}
	exp, err := time.Parse(time.RFC3339Nano, tb.Token.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("token expires_at: %w", err)
	}
	tk := tb.Token
	t := &Token{UserID: tk.User.ID, UserName: tk.User.Name, ExpiresAt: exp, IsAdminProject: true, SystemAll: tk.System["all"]}
	if tk.User.Domain != nil {
		t.UserDomainID, t.UserDomainName = tk.User.Domain.ID, tk.User.Domain.Name
	}
	if tk.Project != nil {
		t.ProjectID, t.ProjectName = tk.Project.ID, tk.Project.Name
		if tk.Project.Domain != nil {
			t.ProjectDomainID, t.ProjectDomainName = tk.Project.Domain.ID, tk.Project.Domain.Name
		}
	}
	if tk.Domain != nil {
		t.DomainID, t.DomainName = tk.Domain.ID, tk.Domain.Name
	}
	for _, r := range tk.Roles {
		t.Roles = append(t.Roles, r.Name)
	}
	if tk.IsAdminProject != nil {
		t.IsAdminProject = *tk.IsAdminProject
	}
	return t, nil
}
