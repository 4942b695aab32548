package novaclient

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
)

// novaTLSDouble is a compute API double that records what reaches it (the
// path and the token of each request): the real nova-api here serves
// plain HTTP only, and these are TLS tests.
type novaTLSDouble struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (n *novaTLSDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.seen = append(n.seen, r.Clone(context.Background()))
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"aggregates": [], "hypervisors": [], "services": []}`))
}

func (n *novaTLSDouble) first(t *testing.T) *http.Request {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.seen) == 0 {
		t.Fatal("no request reached Nova")
	}
	r := n.seen[0]
	n.seen = nil
	return r
}

// novaClouds writes a clouds.yaml and points the usual search at it:
// Settings.Cloud has no file of its own.
func novaClouds(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	return path
}

// TestNovaCloudsTLS: Open's client of a clouds.yaml entry honours
// cacert and verify: false, refuses an untrusted server, and reports an
// entry without auth: or endpoint as a configuration error, not a panic.
func TestNovaCloudsTLS(t *testing.T) {
	rec := &novaTLSDouble{}
	srv := httptest.NewTLSServer(rec)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	common := "{auth_type: admin_token, auth: {token: admin, endpoint: " + srv.URL + "/compute/v2.1}"
	path := novaClouds(t, "clouds:\n  cacert: "+common+", cacert: "+ca+"}\n  insecure: "+common+", verify: false}\n  plain: "+common+"}\n"+
		"  bare: {region_name: r}\n  nowhere: {auth_type: none}\n")
	ctx := context.Background()
	for _, cloud := range []string{"cacert", "insecure"} {
		nova, err := Open(ctx, Settings{Cloud: cloud})
		if err != nil {
			t.Fatalf("%s: %v", cloud, err)
		}
		_, _ = nova.State(ctx) // what Nova answers is not this test's concern
		if r := rec.first(t); r.URL.Path != "/compute/v2.1/os-aggregates" || r.Header.Get("X-Auth-Token") != "admin" {
			t.Errorf("%s: %s with token %q", cloud, r.URL.Path, r.Header.Get("X-Auth-Token"))
		}
	}
	nova, err := Open(ctx, Settings{Cloud: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nova.State(ctx); err == nil || !strings.Contains(err.Error(), "x509: certificate signed by unknown authority") {
		t.Errorf("untrusted server: %v", err)
	}
	for cloud, want := range map[string]string{
		"bare":    path + ":5: clouds.bare.auth: required with auth_type password",
		"nowhere": path + ":6: clouds.nowhere: auth_type none needs the compute endpoint",
	} {
		if _, err := Open(ctx, Settings{Cloud: cloud}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", cloud, err, want)
		}
	}
}

// TestOpenNova_Settings: the source each setting selects, the compute
// API with its timeout, and the compute list the gate reads.
func TestOpenNova_Settings(t *testing.T) {
	ctx := context.Background()
	if nova, err := Open(ctx, Settings{}); nova != nil || err != nil {
		t.Errorf("no source: %v, %v; want nil", nova, err)
	}
	if cs, err := OpenComputes(ctx, Settings{}); cs != nil || err != nil {
		t.Errorf("no compute list: %v, %v; want nil", cs, err)
	}
	if nova, err := Open(ctx, Settings{File: "nova.json"}); err != nil || nova != (File{Path: "nova.json"}) {
		t.Errorf("file: %v, %v", nova, err)
	}
	nova, err := Open(ctx, Settings{Endpoint: "http://nova.invalid/v2.1", Token: "t", Timeout: time.Minute})
	api, ok := nova.(*API)
	if err != nil || !ok || api.Timeout != time.Minute {
		t.Fatalf("endpoint: %#v, %v; want a compute API with a 1m timeout", nova, err)
	}
	if cs := ComputesFrom(Settings{}, api); cs != ComputeLister(api) {
		t.Errorf("without cell databases: %#v, want the compute API's os-services", cs)
	}
	cells := []CellDatabase{{Name: "cell1", DSN: "ro@tcp(db1)/nova_cell1"}}
	cs := ComputesFrom(Settings{CellDatabases: cells, CellTimeout: time.Second}, api)
	if db, ok := cs.(CellDatabases); !ok || db.Nova != ComputeLister(api) || len(db.Cells) != 1 || db.QueryTimeout != time.Second {
		t.Errorf("with cell databases: %#v", cs)
	}
}

// TestNovaCloudsFile: CloudsFile names the clouds.yaml the entry is read
// from, instead of the usual places; an entry that cannot be used is a
// cloudsyaml.Error, which the commands take for a configuration error.
func TestNovaCloudsFile(t *testing.T) {
	rec := &novaTLSDouble{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	novaClouds(t, "clouds:\n  elsewhere: {auth_type: none, endpoint_override: http://127.0.0.1:1}\n")
	path := filepath.Join(t.TempDir(), "nova-clouds.yaml")
	body := "clouds:\n  nova: {auth_type: admin_token, auth: {token: tok, endpoint: " + srv.URL + "/v2.1}}\n  oidc: {auth_type: v3oidc}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nova, err := Open(ctx, Settings{Cloud: "nova", CloudsFile: path})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = nova.State(ctx) // what Nova answers is not this test's concern
	if r := rec.first(t); r.URL.Path != "/v2.1/os-aggregates" || r.Header.Get("X-Auth-Token") != "tok" {
		t.Errorf("%s with token %q, want the entry of %s", r.URL.Path, r.Header.Get("X-Auth-Token"), path)
	}
	_, err = Open(ctx, Settings{Cloud: "oidc", CloudsFile: path})
	if want := path + `:3: clouds.oidc.auth_type: "v3oidc" is not supported`; err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, new(*cloudsyaml.Error)) {
		t.Errorf("got %v, want a cloudsyaml.Error %s", err, want)
	}
}
