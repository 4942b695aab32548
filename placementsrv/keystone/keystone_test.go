package keystone

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// ks is a real Keystone for the whole test binary.
var ks *keystonetest.Keystone

func TestMain(m *testing.M) {
	os.Exit(svcproc.RunEager(m, keystonetest.Shared(keystonetest.Options{}), &ks))
}

// newTestClient validates as the fixture's service user, whose only role
// is service, as keystonemiddleware's user.
func newTestClient(t *testing.T, authURL string, now func() time.Time, edit ...func(*Options)) *Client {
	t.Helper()
	o := Options{AuthURL: authURL, Username: keystonetest.Validator, Password: keystonetest.Password,
		ProjectName: keystonetest.ProjectService, Now: now, CacheTTL: time.Minute}
	for _, e := range edit {
		e(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var demo = keystonetest.Project(keystonetest.ProjectDemo)

// TestValidate: what the real Keystone says about project and system
// tokens, and every token it refuses.
func TestValidate(t *testing.T) {
	c := newTestClient(t, ks.AuthURL(), nil)
	ctx := context.Background()
	t.Run("project scope", func(t *testing.T) {
		tok, err := c.Validate(ctx, " "+ks.Token(t, keystonetest.DemoMember, demo)+"\t")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(tok.Roles)
		if tok.UserID != ks.UserID(keystonetest.DemoMember) || tok.UserName != keystonetest.DemoMember ||
			tok.ProjectID != ks.ProjectID(keystonetest.ProjectDemo) || tok.ProjectName != keystonetest.ProjectDemo ||
			tok.ProjectDomainID != "default" || tok.UserDomainID != "default" || tok.SystemAll ||
			!slices.Equal(tok.Roles, []string{"member", "reader"}) || !tok.IsAdminProject {
			t.Errorf("token %+v", tok)
		}
	})
	t.Run("system scope", func(t *testing.T) {
		tok, err := c.Validate(ctx, ks.Token(t, keystonetest.SystemReader, keystonetest.System))
		if err != nil {
			t.Fatal(err)
		}
		if !tok.SystemAll || tok.ProjectID != "" || !slices.Equal(tok.Roles, []string{"reader"}) {
			t.Errorf("token %+v", tok)
		}
	})
	revoked := ks.Token(t, keystonetest.DemoReader, demo)
	ks.Revoke(t, revoked)
	for _, tc := range []struct{ name, token string }{
		{"revoked", revoked},
		{"unknown", "gAAAAABnot-a-fernet-token"},
		{"malformed", "%%not-a-token"},
		{"empty", "  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Validate(ctx, tc.token); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("got %v, want ErrInvalidToken", err)
			}
		})
	}
	if n := c.stats().ServiceAuths; n != 1 {
		t.Errorf("%d service authentications, want 1", n)
	}
}

// TestExpiredToken: a token past its expiry is refused by Keystone
// itself (an issuer whose tokens live 6 s: long enough for the first
// validation on a loaded machine, short enough to wait out).
func TestExpiredToken(t *testing.T) {
	short := ks.StartIssuer(t, 6*time.Second).IssueToken(t, keystonetest.DemoReader, demo)
	c := newTestClient(t, ks.AuthURL(), nil, func(o *Options) { o.CacheSize = -1 })
	if _, err := c.Validate(context.Background(), short.ID); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	time.Sleep(time.Until(short.ExpiresAt) + 500*time.Millisecond)
	if _, err := c.Validate(context.Background(), short.ID); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("after expiry: %v, want ErrInvalidToken", err)
	}
}

func TestCacheHitMakesNoCall(t *testing.T) {
	tok := ks.Token(t, keystonetest.DemoMember, demo)
	now := time.Now()
	clock := now
	c := newTestClient(t, ks.AuthURL(), func() time.Time { return clock })
	ctx := context.Background()
	for range 3 {
		if _, err := c.Validate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.stats(); s.Validations != 1 || s.CacheHits != 2 {
		t.Errorf("%d validations, %d cache hits; want 1 and 2", s.Validations, s.CacheHits)
	}
	// Revoked in Keystone: the cached answer stands until the TTL ends.
	ks.Revoke(t, tok)
	clock = now.Add(59 * time.Second)
	if _, err := c.Validate(ctx, tok); err != nil {
		t.Fatalf("within TTL: %v", err)
	}
	clock = now.Add(61 * time.Second)
	if _, err := c.Validate(ctx, tok); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after TTL: %v, want ErrInvalidToken", err)
	}
}

// TestCacheNeverOutlivesToken: with a TTL longer than the token's life,
// the cached answer ends at expires_at.
func TestCacheNeverOutlivesToken(t *testing.T) {
	tok := ks.IssueToken(t, keystonetest.DemoMember, demo)
	clock := time.Now()
	c := newTestClient(t, ks.AuthURL(), func() time.Time { return clock }, func(o *Options) { o.CacheTTL = 3 * time.Hour })
	if _, err := c.Validate(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	clock = tok.ExpiresAt.Add(time.Second) // within the TTL, past expires_at
	if _, err := c.Validate(context.Background(), tok.ID); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("got %v, want ErrInvalidToken", err)
	}
	if n := c.stats().Validations; n != 2 {
		t.Errorf("%d validations, want 2 (the expired entry is not served)", n)
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

// TestServiceTokenRenewal: the service token is renewed 30 s before its
// expiry, and again when Keystone rejects it (revoked).
func TestServiceTokenRenewal(t *testing.T) {
	tok := ks.Token(t, keystonetest.DemoMember, demo)
	clock := time.Now()
	c := newTestClient(t, ks.AuthURL()+"/", func() time.Time { return clock }, func(o *Options) { o.CacheSize = -1 })
	ctx := context.Background()
	if _, err := c.Validate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	clock = c.svcExp.Add(-20 * time.Second) // within 30 s of the service token's expiry
	if _, err := c.Validate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if n := c.stats().ServiceAuths; n != 2 {
		t.Errorf("%d service authentications, want 2", n)
	}
	clock = time.Now()
	ks.Revoke(t, c.svcTok)
	if _, err := c.Validate(ctx, tok); err != nil {
		t.Fatalf("after the service token was revoked: %v", err)
	}
	if n := c.stats().ServiceAuths; n != 3 {
		t.Errorf("%d service authentications, want 3", n)
	}
}

// faultDouble stands in front of the real Keystone for the faults it
// cannot be made to produce: an error status, or a token document it
// would never write. Otherwise it forwards.
type faultDouble struct {
	next   http.Handler
	mu     sync.Mutex
	status int    // answer every request with this status
	body   string // answer validations with this document
}

func newFaultDouble(t *testing.T) (*faultDouble, *httptest.Server) {
	u, _ := url.Parse(ks.URL)
	d := &faultDouble{next: httputil.NewSingleHostReverseProxy(u)}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return d, srv
}

func (d *faultDouble) set(status int, body string) {
	d.mu.Lock()
	d.status, d.body = status, body
	d.mu.Unlock()
}

func (d *faultDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	status, body := d.status, d.body
	d.mu.Unlock()
	switch {
	case status != 0:
		w.WriteHeader(status)
	case body != "" && r.Method == http.MethodGet:
		_, _ = w.Write([]byte(body))
	default:
		d.next.ServeHTTP(w, r)
	}
}

func TestKeystoneUnavailable(t *testing.T) {
	ctx := context.Background()
	tok := ks.Token(t, keystonetest.DemoMember, demo)
	t.Run("down", func(t *testing.T) {
		issuer := ks.StartIssuer(t, time.Hour)
		c := newTestClient(t, issuer.AuthURL(), nil)
		if _, err := c.Validate(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if err := issuer.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Validate(ctx, ks.Token(t, keystonetest.DemoReader, demo)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("server error (double)", func(t *testing.T) {
		d, srv := newFaultDouble(t)
		c := newTestClient(t, srv.URL, nil)
		d.set(http.StatusServiceUnavailable, "")
		if _, err := c.Validate(ctx, tok); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("bad service password", func(t *testing.T) {
		c := newTestClient(t, ks.AuthURL(), nil, func(o *Options) { o.Password = "wrong" })
		if _, err := c.Validate(ctx, tok); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("service user without the service role", func(t *testing.T) {
		// Keystone forbids a plain member to validate others' tokens.
		c := newTestClient(t, ks.AuthURL(), nil, func(o *Options) {
			o.Username, o.ProjectName = keystonetest.DemoMember, keystonetest.ProjectDemo
		})
		// Another user's token: a user may validate its own.
		if _, err := c.Validate(ctx, ks.Token(t, keystonetest.DemoReader, demo)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
}

// TestUnreadableDocuments: token documents a real Keystone never writes
// (served by the double) are refusals.
func TestUnreadableDocuments(t *testing.T) {
	d, srv := newFaultDouble(t)
	c := newTestClient(t, srv.URL, nil, func(o *Options) { o.CacheSize = -1 })
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for name, body := range map[string]string{
		"unreadable":     `{"token": {"user": `,
		"without user":   `{"token": {"expires_at": "` + exp + `"}}`,
		"without expiry": `{"token": {"user": {"id": "u1"}}}`,
	} {
		d.set(0, body)
		if _, err := c.Validate(context.Background(), "anything"); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: got %v, want ErrInvalidToken", name, err)
		}
	}
}

// TestInvalidTokensAreCached: a token Keystone refused is refused again
// without a call until InvalidCacheTTL passes; an outage is not
// remembered as a refusal.
func TestInvalidTokensAreCached(t *testing.T) {
	d, srv := newFaultDouble(t)
	now := time.Now()
	clock := now
	c := newTestClient(t, srv.URL, func() time.Time { return clock })
	ctx := context.Background()
	junk := "gAAAAABjunk"
	for range 3 {
		if _, err := c.Validate(ctx, junk); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("got %v, want ErrInvalidToken", err)
		}
	}
	if s := c.stats(); s.Validations != 1 || s.InvalidHits != 2 {
		t.Errorf("%d validations, %d invalid-cache hits; want 1 and 2", s.Validations, s.InvalidHits)
	}
	clock = now.Add(11 * time.Second) // past the 10s default: Keystone is asked again
	if _, err := c.Validate(ctx, junk); !errors.Is(err, ErrInvalidToken) || c.stats().Validations != 2 {
		t.Fatalf("after InvalidCacheTTL: %v, %d validations", err, c.stats().Validations)
	}

	tok := ks.Token(t, keystonetest.DemoMember, demo)
	d.set(http.StatusServiceUnavailable, "")
	if _, err := c.Validate(ctx, tok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
	d.set(0, "")
	if _, err := c.Validate(ctx, tok); err != nil {
		t.Fatalf("after the outage: %v (an outage was cached as a refusal)", err)
	}
}
