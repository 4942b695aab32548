package novatest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/keystonetest"
)

// KeystoneAPI is a second nova-api over the Nova's own databases and
// cells, with [api] auth_strategy = keystone: it takes only tokens that
// the given Keystone validates, and applies Nova's policy to their roles
// (os-services, os-aggregates and os-hypervisors need admin in a
// project). What the noauth2 API writes, this one reads.
type KeystoneAPI struct {
	// Endpoint is the compute API with its version, http://127.0.0.1:N/v2.1.
	Endpoint string
	// StartUp is how long the start took.
	StartUp time.Duration

	proc *apiProc
}

// StartKeystoneAPI starts a keystone-authed nova-api for the test and
// stops it at cleanup. keystonemiddleware validates tokens as
// keystonetest.Validator (the service role only) and caches none, so a
// revoked token is refused at once; it is ready once an admin's token
// lists os-services.
func (n *Nova) StartKeystoneAPI(t testing.TB, ks *keystonetest.Keystone) *KeystoneAPI {
	t.Helper()
	began := time.Now()
	f, err := os.CreateTemp(n.dir, "nova-keystone-*.conf")
	if err != nil {
		t.Fatalf("novatest: %v", err)
	}
	// Keystone's bootstrap gives the identity service a public endpoint
	// only, where keystonemiddleware looks for the internal one.
	_, err = fmt.Fprintf(f, `[api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = %[1]s
auth_url = %[1]s
auth_type = password
interface = public
region_name = %[2]s
username = %[3]s
password = %[4]s
project_name = %[5]s
user_domain_name = Default
project_domain_name = Default
token_cache_time = -1
`, ks.AuthURL(), keystonetest.Region, keystonetest.Validator, keystonetest.Password, keystonetest.ProjectService)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("novatest: %v", err)
	}
	conf := filepath.Base(f.Name())
	admin := ks.Token(t, keystonetest.ServiceAdmin, keystonetest.Project(keystonetest.ProjectService))
	p, err := n.startProc(context.Background(), strings.TrimSuffix(conf, ".conf"), "nova.conf;"+conf, admin)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { _ = p.stop() })
	return &KeystoneAPI{Endpoint: p.root + "v2.1", StartUp: time.Since(began), proc: p}
}

// Log is this nova-api's log so far.
func (a *KeystoneAPI) Log() string { return a.proc.ReadLog() }
