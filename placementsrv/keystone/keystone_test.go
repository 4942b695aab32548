package keystone

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// keystoneDouble is a Keystone v3 API double: password authentication
// for the service user, and token validation for a table of user tokens.
type keystoneDouble struct {
	t  *testing.T
	mu sync.Mutex
	// tokens maps a user token to its document; absent tokens are 404.
	tokens       map[string]map[string]any
	serviceToken string
	serviceExp   time.Time
	auths        int
	validations  int
	// rejectService makes validation answer 401 once (the service token
	// was revoked).
	rejectService bool
	// fail makes every call answer this status.
	fail int
}

func newKeystoneDouble(t *testing.T) (*keystoneDouble, *httptest.Server) {
	d := &keystoneDouble{t: t, tokens: map[string]map[string]any{}, serviceExp: time.Now().Add(time.Hour)}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return d, srv
}

func (d *keystoneDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != 0 {
		w.WriteHeader(d.fail)
		return
	}
	if r.URL.Path != "/v3/auth/tokens" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		var body authRequest
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		u := body.Auth.Identity.Password.User
		if u.Name != "placement" || u.Password != "secret" || u.Domain.Name != "Default" ||
			body.Auth.Scope == nil || body.Auth.Scope.Project.Name != "service" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		d.auths++
		d.serviceToken = "svc-" + time.Now().Format(time.RFC3339Nano)
		w.Header().Set("X-Subject-Token", d.serviceToken)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
			"expires_at": d.serviceExp.UTC().Format(time.RFC3339Nano), "user": map[string]any{"id": "placement-id"}}})
	case http.MethodGet:
		d.validations++
		if r.Header.Get("X-Auth-Token") != d.serviceToken || d.rejectService {
			d.rejectService = false
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.RawQuery != "nocatalog" {
			d.t.Errorf("validation query %q, want nocatalog", r.URL.RawQuery)
		}
		doc, ok := d.tokens[r.Header.Get("X-Subject-Token")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error": {"code": 404, "message": "Could not find token.", "title": "Not Found"}}`))
			return
		}
		if raw, ok := doc["raw"].(string); ok {
			_, _ = w.Write([]byte(raw))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"token": doc})
	}
}

func projectToken(exp time.Time) map[string]any {
	return map[string]any{
		"expires_at": exp.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"user":       map[string]any{"id": "u1", "name": "alice", "domain": map[string]any{"id": "default", "name": "Default"}},
		"project":    map[string]any{"id": "p1", "name": "demo", "domain": map[string]any{"id": "default", "name": "Default"}},
		"roles":      []map[string]any{{"id": "r1", "name": "reader"}, {"id": "r2", "name": "member"}},
	}
}

func systemToken(exp time.Time) map[string]any {
	return map[string]any{
		"expires_at":       exp.UTC().Format(time.RFC3339),
		"user":             map[string]any{"id": "u2", "name": "admin", "domain": map[string]any{"id": "default"}},
		"system":           map[string]any{"all": true},
		"roles":            []map[string]any{{"id": "r0", "name": "admin"}},
		"is_admin_project": false,
	}
}

func newTestClient(t *testing.T, url string, now func() time.Time) *Client {
	c, err := New(Options{AuthURL: url, Username: "placement", Password: "secret", ProjectName: "service", Now: now, CacheTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestValidate(t *testing.T) {
	d, srv := newKeystoneDouble(t)
	now := time.Now()
	d.tokens["project"] = projectToken(now.Add(time.Hour))
	d.tokens["system"] = systemToken(now.Add(time.Hour))
	d.tokens["expired"] = projectToken(now.Add(-time.Second))
	d.tokens["garbage-doc"] = map[string]any{"raw": `{"token": {"user": `}
	d.tokens["no-user"] = map[string]any{"expires_at": now.Add(time.Hour).Format(time.RFC3339)}
	c := newTestClient(t, srv.URL, nil)
	ctx := context.Background()

	t.Run("project scope", func(t *testing.T) {
		tok, err := c.Validate(ctx, " project\t")
		if err != nil {
			t.Fatal(err)
		}
		if tok.UserID != "u1" || tok.ProjectID != "p1" || tok.ProjectDomainID != "default" || tok.SystemAll ||
			len(tok.Roles) != 2 || tok.Roles[0] != "reader" || !tok.IsAdminProject || tok.UserDomainID != "default" {
			t.Errorf("token %+v", tok)
		}
	})
	t.Run("system scope", func(t *testing.T) {
		tok, err := c.Validate(ctx, "system")
		if err != nil {
			t.Fatal(err)
		}
		if !tok.SystemAll || tok.ProjectID != "" || tok.Roles[0] != "admin" || tok.IsAdminProject {
			t.Errorf("token %+v", tok)
		}
	})
	for _, tc := range []struct{ name, token string }{
		{"expired", "expired"},
		{"revoked or unknown", "revoked"},
		{"malformed", "%%not-a-token"},
		{"empty", "  "},
		{"unreadable document", "garbage-doc"},
		{"document without user", "no-user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Validate(ctx, tc.token); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("got %v, want ErrInvalidToken", err)
			}
		})
	}
	if d.auths != 1 {
		t.Errorf("%d service authentications, want 1", d.auths)
	}
}

func TestCacheHitMakesNoCall(t *testing.T) {
	d, srv := newKeystoneDouble(t)
	now := time.Now()
	d.tokens["project"] = projectToken(now.Add(time.Hour))
	clock := now
	c := newTestClient(t, srv.URL, func() time.Time { return clock })
	ctx := context.Background()
	for range 3 {
		if _, err := c.Validate(ctx, "project"); err != nil {
			t.Fatal(err)
		}
	}
	if d.validations != 1 || c.Stats().CacheHits != 2 {
		t.Errorf("%d validations, %d cache hits; want 1 and 2", d.validations, c.Stats().CacheHits)
	}
	// Revoked in Keystone: the cached answer stands until the TTL ends.
	delete(d.tokens, "project")
	clock = now.Add(59 * time.Second)
	if _, err := c.Validate(ctx, "project"); err != nil {
		t.Fatalf("within TTL: %v", err)
	}
	clock = now.Add(61 * time.Second)
	if _, err := c.Validate(ctx, "project"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after TTL: %v, want ErrInvalidToken", err)
	}
}

func TestCacheNeverOutlivesToken(t *testing.T) {
	d, srv := newKeystoneDouble(t)
	now := time.Now()
	d.tokens["short"] = projectToken(now.Add(10 * time.Second))
	clock := now
	c := newTestClient(t, srv.URL, func() time.Time { return clock })
	if _, err := c.Validate(context.Background(), "short"); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(11 * time.Second) // within the 1m TTL, past expires_at
	if _, err := c.Validate(context.Background(), "short"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("got %v, want ErrInvalidToken", err)
	}
	if d.validations != 2 {
		t.Errorf("%d validations, want 2 (the expired entry is not served)", d.validations)
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := newLRU(2)
	until := time.Now().Add(time.Hour)
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, &Token{UserID: k}, until)
	}
	if c.len() != 2 {
		t.Fatalf("len %d", c.len())
	}
	if _, ok := c.get("a", time.Now()); ok {
		t.Error("the least recently used entry was kept")
	}
}

func TestServiceTokenRenewal(t *testing.T) {
	d, srv := newKeystoneDouble(t)
	now := time.Now()
	d.tokens["project"] = projectToken(now.Add(time.Hour))
	d.serviceExp = now.Add(time.Minute)
	clock := now
	c, err := New(Options{AuthURL: srv.URL + "/v3/", Username: "placement", Password: "secret", ProjectName: "service",
		CacheSize: -1, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Validate(ctx, "project"); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(40 * time.Second) // within 30s of the service token's expiry
	d.serviceExp = now.Add(2 * time.Hour)
	if _, err := c.Validate(ctx, "project"); err != nil {
		t.Fatal(err)
	}
	if d.auths != 2 {
		t.Errorf("%d service authentications, want 2", d.auths)
	}
	// Keystone rejects the service token: authenticate again and retry.
	d.rejectService = true
	if _, err := c.Validate(ctx, "project"); err != nil {
		t.Fatalf("after a rejected service token: %v", err)
	}
	if d.auths != 3 {
		t.Errorf("%d service authentications, want 3", d.auths)
	}
}

func TestKeystoneUnavailable(t *testing.T) {
	ctx := context.Background()
	t.Run("down", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c := newTestClient(t, url, nil)
		if _, err := c.Validate(ctx, "project"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("server error", func(t *testing.T) {
		d, srv := newKeystoneDouble(t)
		d.tokens["project"] = projectToken(time.Now().Add(time.Hour))
		c := newTestClient(t, srv.URL, nil)
		d.fail = http.StatusServiceUnavailable
		if _, err := c.Validate(ctx, "project"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("bad service password", func(t *testing.T) {
		_, srv := newKeystoneDouble(t)
		c, _ := New(Options{AuthURL: srv.URL, Username: "placement", Password: "wrong", ProjectName: "service"})
		if _, err := c.Validate(ctx, "project"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
}

// TestInvalidTokensAreCached: a token Keystone refused is refused again
// without a call until InvalidCacheTTL passes; an outage is not
// remembered as a refusal.
func TestInvalidTokensAreCached(t *testing.T) {
	d, srv := newKeystoneDouble(t)
	now := time.Now()
	clock := now
	c := newTestClient(t, srv.URL, func() time.Time { return clock })
	ctx := context.Background()
	for range 3 {
		if _, err := c.Validate(ctx, "junk"); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("got %v, want ErrInvalidToken", err)
		}
	}
	if d.validations != 1 || c.Stats().InvalidHits != 2 {
		t.Errorf("%d validations, %d invalid-cache hits; want 1 and 2", d.validations, c.Stats().InvalidHits)
	}
	d.tokens["junk"] = projectToken(now.Add(time.Hour)) // issued now
	clock = now.Add(11 * time.Second)                   // past the 10s default
	if _, err := c.Validate(ctx, "junk"); err != nil {
		t.Fatalf("after InvalidCacheTTL: %v", err)
	}

	d.fail = http.StatusServiceUnavailable
	if _, err := c.Validate(ctx, "other"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
	d.fail = 0
	d.tokens["other"] = projectToken(now.Add(time.Hour))
	if _, err := c.Validate(ctx, "other"); err != nil {
		t.Fatalf("after the outage: %v (an outage was cached as a refusal)", err)
	}
}
