package keystonetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// Password is every fixture user's password.
const Password = "keystonetest-Passw0rd"

// Region is the bootstrap region, holding the identity endpoint.
const Region = "RegionOne"

// Projects of the fixture, all in the Default domain.
const (
	ProjectAdmin   = "admin"   // keystone-manage bootstrap's
	ProjectService = "service" // service users
	ProjectDemo    = "demo"    // end users
)

// Users of the fixture, all in the Default domain. Keystone's bootstrap
// makes admin imply member and member imply reader, so a token carries
// the implied roles too.
const (
	// Admin is bootstrap's: admin in project admin and on the system.
	Admin = "admin"
	// Validator has the service role in project service, no more: what
	// keystonemiddleware's user needs to validate tokens.
	Validator = "placement"
	// ServiceAdmin has admin and service in project service: what the
	// agent and the reconciler authenticate as.
	ServiceAdmin = "syncd"
	// DemoAdmin, DemoMember and DemoReader hold admin, member and reader
	// in project demo.
	DemoAdmin  = "demo-admin"
	DemoMember = "demo-member"
	DemoReader = "demo-reader"
	// SystemReader holds reader on the system.
	SystemReader = "system-reader"
)

// grant is one role assignment: on a project, or on the system when
// project is "".
type grant struct{ user, role, project string }

func fixtureGrants() []grant {
	return []grant{{Validator, "service", ProjectService},
		{ServiceAdmin, "admin", ProjectService}, {ServiceAdmin, "service", ProjectService},
		{DemoAdmin, "admin", ProjectDemo}, {DemoMember, "member", ProjectDemo}, {DemoReader, "reader", ProjectDemo},
		{SystemReader, "reader", ""}}
}

// loadFixture creates the projects, the service role, the users and
// their grants over the API, as bootstrap's admin.
func (k *Keystone) loadFixture(ctx context.Context) error {
	tok, _, err := k.issue(ctx, Admin, Project(ProjectAdmin))
	if err != nil {
		return err
	}
	k.admin = tok
	k.ids = map[string]string{}
	if err := k.lookupIDs(ctx); err != nil {
		return err
	}
	if err := k.create(ctx, "/roles", "role", map[string]any{"name": "service"}, "role:service"); err != nil {
		return err
	}
	for _, p := range []string{ProjectService, ProjectDemo} {
		if err := k.create(ctx, "/projects", "project", map[string]any{"name": p, "domain_id": "default"}, "project:"+p); err != nil {
			return err
		}
	}
	for _, u := range []string{Validator, ServiceAdmin, DemoAdmin, DemoMember, DemoReader, SystemReader} {
		if err := k.create(ctx, "/users", "user", map[string]any{"name": u, "password": Password, "domain_id": "default"}, "user:"+u); err != nil {
			return err
		}
	}
	for _, g := range fixtureGrants() {
		path := "/system/users/" + k.ids["user:"+g.user] + "/roles/" + k.ids["role:"+g.role]
		if g.project != "" {
			path = "/projects/" + k.ids["project:"+g.project] + "/users/" + k.ids["user:"+g.user] + "/roles/" + k.ids["role:"+g.role]
		}
		if _, _, err := k.call(ctx, http.MethodPut, path, nil, http.StatusNoContent, nil); err != nil {
			return err
		}
	}
	return nil
}

// lookupIDs records bootstrap's roles and project.
func (k *Keystone) lookupIDs(ctx context.Context) error {
	var roles struct {
		Roles []struct{ ID, Name string } `json:"roles"`
	}
	if _, _, err := k.call(ctx, http.MethodGet, "/roles", nil, http.StatusOK, &roles); err != nil {
		return err
	}
	for _, r := range roles.Roles {
		k.ids["role:"+r.Name] = r.ID
	}
	var projects struct {
		Projects []struct{ ID, Name string } `json:"projects"`
	}
	if _, _, err := k.call(ctx, http.MethodGet, "/projects?name="+ProjectAdmin, nil, http.StatusOK, &projects); err != nil {
		return err
	}
	for _, p := range projects.Projects {
		k.ids["project:"+p.Name] = p.ID
	}
	return nil
}

// create POSTs {kind: body} to path and records the new ID under key.
func (k *Keystone) create(ctx context.Context, path, kind string, body map[string]any, key string) error {
	var doc map[string]struct {
		ID string `json:"id"`
	}
	if _, _, err := k.call(ctx, http.MethodPost, path, map[string]any{kind: body}, http.StatusCreated, &doc); err != nil {
		return err
	}
	k.ids[key] = doc[kind].ID
	return nil
}

// call makes one API request as admin (X-Auth-Token when set) and
// decodes the answer into out when it is not nil.
func (k *Keystone) call(ctx context.Context, method, path string, body any, want int, out any, hdr ...string) (http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, fmt.Errorf("keystonetest: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.AuthURL()+path, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("keystonetest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if k.admin != "" {
		req.Header.Set("X-Auth-Token", k.admin)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, data, err := do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("keystonetest: %s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return nil, nil, fmt.Errorf("keystonetest: %s %s: %s, want %d: %s", method, path, resp.Status, want, tail(string(data), 500))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, nil, fmt.Errorf("keystonetest: %s %s: %w", method, path, err)
		}
	}
	return resp.Header, data, nil
}

// do sends req, again after a failure: Keystone over SQLite sometimes
// finds the database locked by a connection of an earlier request that
// it has not yet closed, and answers 500 or drops the connection, once.
func do(req *http.Request) (*http.Response, []byte, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, nil, err
		}
	}
	hc := &http.Client{Timeout: time.Minute}
	for attempt := 1; ; attempt++ {
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := hc.Do(req)
		var data []byte
		if err == nil {
			data, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if attempt == 3 || (err == nil && resp.StatusCode < 500) {
			return resp, data, err
		}
	}
}

// Scope is what a token is scoped to: Project(name) or System.
type Scope struct {
	project string
	system  bool
}

// Project scopes a token to a project of the Default domain.
func Project(name string) Scope { return Scope{project: name} }

// System scopes a token to the whole system.
var System = Scope{system: true}

// Token is an issued token: its ID and what Keystone says it expires at.
type Token struct {
	ID        string
	ExpiresAt time.Time
}

// Token authenticates user with Password and returns the token's ID.
func (k *Keystone) Token(t testing.TB, user string, scope Scope) string {
	t.Helper()
	return k.IssueToken(t, user, scope).ID
}

// IssueToken is Token with the token's expiry.
func (k *Keystone) IssueToken(t testing.TB, user string, scope Scope) Token {
	t.Helper()
	id, exp, err := k.issue(context.Background(), user, scope)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return Token{ID: id, ExpiresAt: exp}
}

func (k *Keystone) issue(ctx context.Context, user string, scope Scope) (string, time.Time, error) {
	var sc any
	if scope.system {
		sc = map[string]any{"system": map[string]any{"all": true}}
	} else if scope.project != "" {
		sc = map[string]any{"project": map[string]any{"name": scope.project, "domain": map[string]any{"id": "default"}}}
	}
	auth := map[string]any{"identity": map[string]any{"methods": []string{"password"},
		"password": map[string]any{"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": Password}}}}
	if sc != nil {
		auth["scope"] = sc
	}
	var doc struct {
		Token struct {
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"token"`
	}
	// No admin token on an authentication.
	anon := &Keystone{URL: k.URL}
	h, _, err := anon.call(ctx, http.MethodPost, "/auth/tokens?nocatalog", map[string]any{"auth": auth}, http.StatusCreated, &doc)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("keystonetest: token for %s: %w", user, err)
	}
	return h.Get("X-Subject-Token"), doc.Token.ExpiresAt, nil
}

// Revoke revokes a token, as a user logging out or an operator revoking
// it (DELETE /v3/auth/tokens).
func (k *Keystone) Revoke(t testing.TB, token string) {
	t.Helper()
	if _, _, err := k.call(context.Background(), http.MethodDelete, "/auth/tokens", nil, http.StatusNoContent, nil,
		"X-Subject-Token", token); err != nil {
		t.Fatalf("%v", err)
	}
}

// Catalog creates a region of its own holding one public endpoint per
// service type (e.g. "placement", "baremetal", "compute") at the given
// URL, and returns the region's name, to be set as region_name: tests
// running at once do not see each other's endpoints.
func (k *Keystone) Catalog(t testing.TB, endpoints map[string]string) string {
	t.Helper()
	ctx := context.Background()
	// A region ID in UUID form: Keystone's audit notification for any
	// other leaves its SQLite database locked.
	region := fmt.Sprintf("%016x%016x", time.Now().UnixNano(), k.regions.Add(1))
	if _, _, err := k.call(ctx, http.MethodPost, "/regions", map[string]any{"region": map[string]any{"id": region}}, http.StatusCreated, nil); err != nil {
		t.Fatalf("%v", err)
	}
	for typ, url := range endpoints {
		var svc struct {
			Service struct{ ID string } `json:"service"`
		}
		if _, _, err := k.call(ctx, http.MethodPost, "/services", map[string]any{"service": map[string]any{"type": typ, "name": typ}}, http.StatusCreated, &svc); err != nil {
			t.Fatalf("%v", err)
		}
		ep := map[string]any{"service_id": svc.Service.ID, "interface": "public", "url": url, "region_id": region}
		if _, _, err := k.call(ctx, http.MethodPost, "/endpoints", map[string]any{"endpoint": ep}, http.StatusCreated, nil); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return region
}

// ProjectID is the ID of a fixture project (ProjectAdmin, ProjectService,
// ProjectDemo), as tokens scoped to it carry.
func (k *Keystone) ProjectID(name string) string { return k.ids["project:"+name] }

// UserID is the ID of a user the fixture created (not bootstrap's
// Admin).
func (k *Keystone) UserID(name string) string { return k.ids["user:"+name] }
