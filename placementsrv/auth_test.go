package placementsrv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/keystone"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
)

// startServerWith is startTestServer with the server's options edited.
func startServerWith(t *testing.T, edit func(*Options)) *testServer {
	t.Helper()
	return startServerOpts(t, nil, edit)
}

// secureRBAC enforces scope and the new defaults of release r's rules.
func secureRBAC(t *testing.T, r release.Release) func(*Options) {
	return func(o *Options) {
		p, err := policy.New(policy.Options{EnforceScope: true, EnforceNewDefaults: true, Release: r})
		if err != nil {
			t.Fatal(err)
		}
		o.Policy, o.Release = p, r
	}
}

// TestNoAuthCredentials checks how noauth2 headers become credentials,
// through the policy decisions they lead to under 8.0.0's secure RBAC.
func TestNoAuthCredentials(t *testing.T) {
	ts := startServerWith(t, secureRBAC(t, release.V8))
	cases := []struct {
		name    string
		headers map[string]string
		path    string
		want    int
	}{
		{"system reader", map[string]string{"X-Auth-Token": "u", "X-Roles": "reader", "OpenStack-System-Scope": "all"}, "/resource_providers", 200},
		{"roles are stripped", map[string]string{"X-Auth-Token": "u", "X-Roles": "member, reader", "OpenStack-System-Scope": "all"}, "/resource_providers", 200},
		{"project token is out of scope", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "admin,reader"}, "/resource_providers", 403},
		{"admin user without system scope", map[string]string{"X-Auth-Token": "admin"}, "/resource_providers", 403},
		{"project from token", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader"}, "/usages?project_id=p1", 200},
		{"project defaults to user", map[string]string{"X-Auth-Token": "p1", "X-Roles": "reader"}, "/usages?project_id=p1", 200},
		{"X-Project-Id wins", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader", "X-Project-Id": "p2"}, "/usages?project_id=p1", 403},
		{"other project", map[string]string{"X-Auth-Token": "u:p2", "X-Roles": "reader"}, "/usages?project_id=p1", 403},
		{"no project_id asked", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader"}, "/usages", 403},
		{"system scope drops the project", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "member", "OpenStack-System-Scope": "all"}, "/usages?project_id=p1", 403},
		{"domain scope", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader", "X-Domain-Id": "d"}, "/usages?project_id=p1", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.must(t, tc.want, call{Method: "GET", Path: tc.path, Version: "1.39", Headers: tc.headers})
		})
	}
}

// TestNoAuthCredentials15 is TestNoAuthCredentials under 15.0.0's secure
// RBAC: project-scoped admin or service role, readers for their usages.
func TestNoAuthCredentials15(t *testing.T) {
	ts := startServerWith(t, secureRBAC(t, release.V15))
	cases := []struct {
		name, method, path string
		headers            map[string]string
		want               int
	}{
		{"admin user", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "admin"}, 200},
		{"service role", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "nova:service", "X-Roles": "service"}, 200},
		{"member", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "member,reader"}, 403},
		{"system admin is out of scope", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "u", "X-Roles": "admin", "OpenStack-System-Scope": "all"}, 403},
		{"service roles are not roles", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "u:p1", "X-Service-Roles": "service"}, 403},
		{"domain admin is out of scope", "GET", "/resource_providers", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "admin", "X-Domain-Id": "d"}, 403},
		{"reader of its project", "GET", "/usages?project_id=p1", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader"}, 200},
		{"reader of another project", "GET", "/usages?project_id=p2", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader"}, 403},
		{"the last project_id asked", "GET", "/usages?project_id=p2&project_id=p1", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader"}, 200},
		{"service reads any project's usages", "GET", "/usages?project_id=p2", map[string]string{"X-Auth-Token": "nova:service", "X-Roles": "service"}, 200},
		{"reshaper is not for admin", "POST", "/reshaper", map[string]string{"X-Auth-Token": "admin"}, 403},
		{"reshaper is for the service role", "POST", "/reshaper", map[string]string{"X-Auth-Token": "nova:service", "X-Roles": "service"}, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := call{Method: tc.method, Path: tc.path, Version: "1.39", Headers: tc.headers}
			if tc.method == "POST" {
				c.Body = "{}"
			}
			ts.must(t, tc.want, c)
		})
	}
}

// TestPolicyForbiddenDetails: a failed check names the rule in upstream's
// sentence; a scope failure is the bare rule name, as upstream.
func TestPolicyForbiddenDetails(t *testing.T) {
	ts := startServerWith(t, secureRBAC(t, release.V8))
	r := ts.must(t, 403, call{Method: "GET", Path: "/resource_providers", Version: "1.39",
		Headers: map[string]string{"X-Auth-Token": "u", "X-Roles": "member", "OpenStack-System-Scope": "all"}})
	if d, code := errorDetail(t, r); !strings.Contains(d, "Policy does not allow placement:resource_providers:list to be performed.") || code != apierror.CodeDefault {
		t.Errorf("detail %q code %q", d, code)
	}
	r = ts.must(t, 403, call{Method: "GET", Path: "/resource_providers", Version: "1.39"})
	if d, _ := errorDetail(t, r); d != "Access was denied to this resource.\n\n placement:resource_providers:list  " {
		t.Errorf("scope detail %q", d)
	}
	// 15.0.0: a system token is out of every rule's scope.
	ts = startServerWith(t, secureRBAC(t, release.V15))
	r = ts.must(t, 403, call{Method: "POST", Path: "/reshaper", Version: "1.39", Body: "{}",
		Headers: map[string]string{"X-Auth-Token": "u", "X-Roles": "service", "OpenStack-System-Scope": "all"}})
	if d, _ := errorDetail(t, r); d != "Access was denied to this resource.\n\n placement:reshaper:reshape  " {
		t.Errorf("15.0.0 scope detail %q", d)
	}
	r = ts.must(t, 403, call{Method: "POST", Path: "/reshaper", Version: "1.39", Body: "{}"})
	if d, _ := errorDetail(t, r); !strings.Contains(d, "Policy does not allow placement:reshaper:reshape to be performed.") {
		t.Errorf("15.0.0 detail %q", d)
	}
}

// TestUnauthorizedFormats: noauth2's 401 is a bare webob error whose
// format follows Accept.
func TestUnauthorizedFormats(t *testing.T) {
	ts := startTestServer(t)
	cases := []struct{ accept, ctype, body string }{
		{"", "application/json", `{"message": "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.<br /><br />\n\n\n", "code": "401 Unauthorized", "title": "Unauthorized"}`},
		{"text/plain", "text/plain; charset=UTF-8", "401 Unauthorized\n\nThis server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.\n\n   "},
		{"text/html", "text/html; charset=UTF-8", "<html>\n <head>\n  <title>401 Unauthorized</title>"},
	}
	for _, tc := range cases {
		t.Run(tc.accept, func(t *testing.T) {
			c := call{Method: "GET", Path: "/resource_providers", NoToken: true}
			if tc.accept != "" {
				c.Headers = map[string]string{"Accept": tc.accept}
			}
			r := ts.do(t, c)
			if r.Status != 401 || r.Header.Get("Content-Type") != tc.ctype || !strings.HasPrefix(string(r.Body), tc.body) {
				t.Errorf("%d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
		})
	}
}

// keystoneServerOn starts a server validating ks's tokens as the
// fixture's service user, under release r's secure RBAC and the operator
// rules in policyFile ("" for none).
func keystoneServerOn(t *testing.T, ks *keystonetest.Keystone, policyFile string, r release.Release) *testServer {
	t.Helper()
	client, err := keystone.New(keystone.Options{AuthURL: ks.AuthURL(), Username: keystonetest.Validator,
		Password: keystonetest.Password, ProjectName: keystonetest.ProjectService})
	if err != nil {
		t.Fatal(err)
	}
	return startServerWith(t, func(o *Options) {
		p, err := policy.New(policy.Options{File: policyFile, EnforceScope: true, EnforceNewDefaults: true, Release: r})
		if err != nil {
			t.Fatal(err)
		}
		o.Policy, o.Release = p, r
		o.Auth, o.Tokens, o.WWWAuthenticateURI = "keystone", client, ks.AuthURL()
	})
}

// TestKeystoneAuth: real Keystone tokens decide by their roles and scope;
// headers a client adds change nothing.
func TestKeystoneAuth(t *testing.T) {
	dir := t.TempDir()
	// Any project's usages may be read by a caller whose service token
	// has the service role, whatever the user's roles.
	rules := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(rules, []byte(`"placement:usages": "service_roles:service"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ks := keystonetest.Start(t, keystonetest.Options{})
	ts := keystoneServerOn(t, ks, "", release.V8)
	demo := keystonetest.Project(keystonetest.ProjectDemo)
	sysReader := ks.Token(t, keystonetest.SystemReader, keystonetest.System)
	sysAdmin := ks.Token(t, keystonetest.Admin, keystonetest.System)
	reader := ks.Token(t, keystonetest.DemoReader, demo)
	demoID, serviceID := ks.ProjectID(keystonetest.ProjectDemo), ks.ProjectID(keystonetest.ProjectService)
	create := `{"name": "rp-by-admin"}`
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		want                     int
	}{
		{"system reader lists providers", "GET", "/resource_providers", "", map[string]string{"X-Auth-Token": sysReader}, 200},
		{"system reader cannot create", "POST", "/resource_providers", create, map[string]string{"X-Auth-Token": sysReader}, 403},
		{"system admin creates", "POST", "/resource_providers", create, map[string]string{"X-Auth-Token": sysAdmin}, 200},
		{"project token is out of scope", "GET", "/resource_providers", "", map[string]string{"X-Auth-Token": reader}, 403},
		{"project reader reads its usages", "GET", "/usages?project_id=" + demoID, "", map[string]string{"X-Auth-Token": reader}, 200},
		{"client headers are ignored", "GET", "/resource_providers", "", map[string]string{"X-Auth-Token": reader, "OpenStack-System-Scope": "all", "X-Roles": "admin"}, 403},
		{"another project", "GET", "/usages?project_id=" + serviceID, "", map[string]string{"X-Auth-Token": reader, "X-Project-Id": serviceID}, 403},
		{"root needs no token", "GET", "/", "", map[string]string{"X-Auth-Token": ""}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.must(t, tc.want, call{Method: tc.method, Path: tc.path, Version: "1.39", Body: tc.body, Headers: tc.headers})
		})
	}
	t.Run("revoked token", func(t *testing.T) {
		tok := ks.Token(t, keystonetest.SystemReader, keystonetest.System)
		ks.Revoke(t, tok)
		r := ts.must(t, 401, call{Method: "GET", Path: "/resource_providers", Headers: map[string]string{"X-Auth-Token": tok}})
		if got := r.Header.Get("WWW-Authenticate"); got != `Keystone uri="`+ks.AuthURL()+`"` {
			t.Errorf("WWW-Authenticate %q", got)
		}
		// keystonemiddleware's 401 document.
		const want = `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`
		if string(r.Body) != want || r.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
			t.Errorf("body %s (%s)", r.Body, r.Header.Get("Content-Type"))
		}
	})
	t.Run("missing token", func(t *testing.T) {
		r := ts.do(t, call{Method: "GET", Path: "/traits", NoToken: true})
		if r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%d %v", r.Status, r.Header)
		}
	})
	t.Run("service token", func(t *testing.T) { testServiceToken(t, ks, rules, reader) })
	t.Run("15.0.0", func(t *testing.T) { testKeystone15(t, ks) })
	t.Run("keystone down", func(t *testing.T) { testKeystoneDown(t, ks, sysAdmin) })
}

// testKeystone15: under 15.0.0's secure RBAC, real tokens of a project
// admin or of the service role pass, system tokens are out of scope.
func testKeystone15(t *testing.T, ks *keystonetest.Keystone) {
	ts := keystoneServerOn(t, ks, "", release.V15)
	demo, service := keystonetest.Project(keystonetest.ProjectDemo), keystonetest.Project(keystonetest.ProjectService)
	demoID := ks.ProjectID(keystonetest.ProjectDemo)
	for _, tc := range []struct {
		name, user, path string
		scope            keystonetest.Scope
		want             int
	}{
		{"project admin", keystonetest.DemoAdmin, "/resource_providers", demo, 200},
		{"service role alone", keystonetest.Validator, "/resource_providers", service, 200},
		{"project member", keystonetest.DemoMember, "/resource_providers", demo, 403},
		{"system admin", keystonetest.Admin, "/resource_providers", keystonetest.System, 403},
		{"system reader", keystonetest.SystemReader, "/usages?project_id=" + demoID, keystonetest.System, 403},
		{"project reader's usages", keystonetest.DemoReader, "/usages?project_id=" + demoID, demo, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"X-Auth-Token": ks.Token(t, tc.user, tc.scope)}
			ts.must(t, tc.want, call{Method: "GET", Path: tc.path, Version: "1.39", Headers: h})
		})
	}
}

// testServiceToken: a service token (X-Service-Token) gives its roles as
// service_roles, which an operator rule may require; an invalid one is a
// 401, and service headers a client sends are ignored.
func testServiceToken(t *testing.T, ks *keystonetest.Keystone, rules, reader string) {
	serviceID := ks.ProjectID(keystonetest.ProjectService)
	ts := keystoneServerOn(t, ks, rules, release.V8)
	svc := ks.Token(t, keystonetest.ServiceAdmin, keystonetest.Project(keystonetest.ProjectService))
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"user alone", map[string]string{"X-Auth-Token": reader}, 403},
		{"user with a service token", map[string]string{"X-Auth-Token": reader, "X-Service-Token": svc}, 200},
		{"a user token as service token", map[string]string{"X-Auth-Token": reader, "X-Service-Token": reader}, 403},
		{"invalid service token", map[string]string{"X-Auth-Token": reader, "X-Service-Token": "gAAAAABjunk"}, 401},
		{"service headers are ignored", map[string]string{"X-Auth-Token": reader, "X-Service-Roles": "service"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts.must(t, tc.want, call{Method: "GET", Path: "/usages?project_id=" + serviceID, Version: "1.39", Headers: tc.headers})
		})
	}
}

// testKeystoneDown: when Keystone cannot be reached, a token not seen
// before is a 503 and one validated before is served from the cache.
func testKeystoneDown(t *testing.T, ks *keystonetest.Keystone, unseen string) {
	// A second Keystone over the same state, stopped mid-test.
	issuer := ks.StartIssuer(t, time.Hour)
	ts := keystoneServerOn(t, issuer, "", release.V8)
	seen := ks.Token(t, keystonetest.SystemReader, keystonetest.System)
	ts.must(t, 200, call{Method: "GET", Path: "/resource_providers", Version: "1.39", Headers: map[string]string{"X-Auth-Token": seen}})
	if err := issuer.Stop(); err != nil {
		t.Fatal(err)
	}
	r := ts.must(t, 503, call{Method: "GET", Path: "/traits", Headers: map[string]string{"X-Auth-Token": unseen}})
	if !strings.Contains(string(r.Body), "The Keystone service is temporarily unavailable.") {
		t.Errorf("body %s", r.Body)
	}
	// A token validated before is still served from the cache.
	ts.must(t, 200, call{Method: "GET", Path: "/resource_providers", Version: "1.39", Headers: map[string]string{"X-Auth-Token": seen}})
}

func TestKeystoneNeedsValidator(t *testing.T) {
	if _, err := New(Options{Store: nil, Auth: "keystone"}); err == nil {
		t.Error("no error")
	}
}

func corsOn(o *Options) {
	c := DefaultCORSOptions()
	c.AllowedOrigins = []string{"http://valid.example.com"}
	o.CORS = &c
}

func TestCORS(t *testing.T) {
	ts := startServerWith(t, corsOn)
	pre := func(h map[string]string) testResponse {
		return ts.must(t, 200, call{Method: "OPTIONS", Path: "/resource_providers", Headers: h})
	}
	t.Run("preflight", func(t *testing.T) {
		r := pre(map[string]string{"Origin": "http://valid.example.com", "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "openstack-api-version, x-auth-token,Content-Type"})
		want := map[string]string{"Vary": "Origin", "Access-Control-Allow-Origin": "http://valid.example.com",
			"Access-Control-Allow-Credentials": "true", "Access-Control-Max-Age": "3600", "Access-Control-Allow-Methods": "PUT",
			"Access-Control-Allow-Headers": "openstack-api-version,x-auth-token,Content-Type", "Content-Length": "0", "Content-Type": ""}
		for k, v := range want {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
	})
	for name, h := range map[string]map[string]string{
		"bad origin":    {"Origin": "http://evil.example.com", "Access-Control-Request-Method": "GET"},
		"bad method":    {"Origin": "http://valid.example.com", "Access-Control-Request-Method": "TRACE"},
		"bad header":    {"Origin": "http://valid.example.com", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-custom"},
		"no method":     {"Origin": "http://valid.example.com"},
		"no origin":     {"Access-Control-Request-Method": "GET"},
		"method casing": {"Origin": "http://valid.example.com", "Access-Control-Request-Method": "get"},
	} {
		t.Run(name, func(t *testing.T) {
			if r := pre(h); r.Header.Get("Access-Control-Allow-Origin") != "" || len(r.Body) != 0 {
				t.Errorf("headers %v body %q", r.Header, r.Body)
			}
		})
	}
	t.Run("actual request", func(t *testing.T) {
		r := ts.must(t, 200, call{Method: "GET", Path: "/resource_providers", Version: "1.39", Headers: map[string]string{"Origin": "http://valid.example.com"}})
		if r.Header.Get("Vary") != "openstack-api-version,Origin" || r.Header.Get("Access-Control-Allow-Origin") != "http://valid.example.com" ||
			r.Header.Get("Access-Control-Expose-Headers") != "X-Auth-Token,X-Openstack-Request-Id,X-Subject-Token,X-Service-Token,OpenStack-API-Version" {
			t.Errorf("headers %v", r.Header)
		}
		r = ts.must(t, 403, call{Method: "GET", Path: "/resource_providers", Headers: map[string]string{"Origin": "http://valid.example.com", "X-Auth-Token": "nobody"}})
		if r.Header.Get("Access-Control-Allow-Origin") != "http://valid.example.com" {
			t.Errorf("an error answer lacks CORS headers: %v", r.Header)
		}
		r = ts.must(t, 200, call{Method: "GET", Path: "/", Headers: map[string]string{"Origin": "http://other.example.com"}})
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("other origin got CORS headers")
		}
	})
	t.Run("off", func(t *testing.T) {
		plain := startTestServer(t)
		plain.must(t, 405, call{Method: "OPTIONS", Path: "/", Headers: map[string]string{"Origin": "http://valid.example.com", "Access-Control-Request-Method": "GET"}})
	})
}
