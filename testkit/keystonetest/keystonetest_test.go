package keystonetest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

var ks *Keystone

func TestMain(m *testing.M) { os.Exit(svcproc.RunEager(m, Shared(Options{}), &ks, svcproc.NoLeaks())) }

// validate asks Keystone about token as the validator user does.
func validate(t *testing.T, k *Keystone, token string) (int, map[string]any) {
	t.Helper()
	svc := k.Token(t, Validator, Project(ProjectService))
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, k.AuthURL()+"/auth/tokens?nocatalog", nil)
	req.Header.Set("X-Auth-Token", svc)
	req.Header.Set("X-Subject-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Token map[string]any `json:"token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	return resp.StatusCode, doc.Token
}

func roleNames(tok map[string]any) []string {
	var out []string
	roles, _ := tok["roles"].([]any)
	for _, r := range roles {
		out = append(out, r.(map[string]any)["name"].(string))
	}
	slices.Sort(out)
	return out
}

// TestFixture: every fixture user's token carries its roles and scope
// as the validator user sees them.
func TestFixture(t *testing.T) {
	t.Logf("Keystone started in %s", ks.StartupTime.Round(time.Millisecond))
	for _, tc := range []struct {
		user  string
		scope Scope
		roles []string
	}{
		{Admin, System, []string{"admin", "member", "reader"}},
		{Admin, Project(ProjectAdmin), []string{"admin", "member", "reader"}},
		{Validator, Project(ProjectService), []string{"service"}},
		{ServiceAdmin, Project(ProjectService), []string{"admin", "member", "reader", "service"}},
		{DemoAdmin, Project(ProjectDemo), []string{"admin", "member", "reader"}},
		{DemoMember, Project(ProjectDemo), []string{"member", "reader"}},
		{DemoReader, Project(ProjectDemo), []string{"reader"}},
		{SystemReader, System, []string{"reader"}},
	} {
		t.Run(tc.user, func(t *testing.T) {
			code, doc := validate(t, ks, ks.Token(t, tc.user, tc.scope))
			if code != http.StatusOK {
				t.Fatalf("validation answered %d", code)
			}
			if got := roleNames(doc); !slices.Equal(got, tc.roles) {
				t.Errorf("roles %v, want %v", got, tc.roles)
			}
			_, system := doc["system"]
			if system != tc.scope.system {
				t.Errorf("system scope %v, want %v: %v", system, tc.scope.system, doc)
			}
		})
	}
}

// TestRevokeAndIssuer: a revoked token is refused; an issuer's token is
// valid at the main Keystone until it expires.
func TestRevokeAndIssuer(t *testing.T) {
	tok := ks.Token(t, DemoMember, Project(ProjectDemo))
	ks.Revoke(t, tok)
	if code, _ := validate(t, ks, tok); code != http.StatusNotFound {
		t.Errorf("revoked token: %d, want 404", code)
	}
	// Long enough that issuing and validating under a loaded machine
	// (two Keystones under uWSGI) fit inside it; short enough to wait out.
	const lifetime = 6 * time.Second
	short := ks.StartIssuer(t, lifetime)
	st := short.IssueToken(t, DemoReader, Project(ProjectDemo))
	if d := time.Until(st.ExpiresAt); d > lifetime {
		t.Errorf("issuer's token expires in %s, want at most %s", d, lifetime)
	}
	if code, _ := validate(t, ks, st.ID); code != http.StatusOK {
		t.Fatalf("issuer's token at the main Keystone: %d", code)
	}
	time.Sleep(time.Until(st.ExpiresAt) + 500*time.Millisecond)
	if code, _ := validate(t, ks, st.ID); code != http.StatusNotFound {
		t.Errorf("expired token: %d, want 404", code)
	}
}

// TestCatalog: a region's endpoints are in a token's catalog.
func TestCatalog(t *testing.T) {
	region := ks.Catalog(t, map[string]string{"placement": "http://127.0.0.1:1/placement"})
	req, _ := http.NewRequest(http.MethodGet, ks.AuthURL()+"/auth/catalog", nil)
	req.Header.Set("X-Auth-Token", ks.Token(t, ServiceAdmin, Project(ProjectService)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cat struct {
		Catalog []struct {
			Type      string `json:"type"`
			Endpoints []struct {
				Region, URL string
			} `json:"endpoints"`
		} `json:"catalog"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range cat.Catalog {
		for _, e := range s.Endpoints {
			found = found || (s.Type == "placement" && e.Region == region && e.URL == "http://127.0.0.1:1/placement")
		}
	}
	if !found {
		t.Errorf("placement endpoint of region %s not in the catalog: %+v", region, cat)
	}
}
