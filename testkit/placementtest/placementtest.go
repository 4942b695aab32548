// Package placementtest starts Placement servers for tests outside
// placementsrv: ours (placementsrv on a temporary SQLite file) and the
// reference OpenStack Placement 8.0.0 (serve.sh under uWSGI), so that the
// agent and the reconciler are tested against both with the same code.
package placementtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/keystone"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Kinds of server.
const (
	Ours      = "ours"
	Reference = "reference"
)

// Server is a running Placement service.
type Server struct {
	Kind  string
	URL   string // base URL, no trailing slash
	Token string // admin token for noauth2
	// Version is the microversion the helpers (Inventories, Traits) use:
	// the server's highest.
	Version string
	// DB is the reference's database (an SQLAlchemy URL); empty for ours.
	DB string
	// Release is the upstream release a reference runs, or whose rules
	// ours follows.
	Release release.Release
	// Snapshot, for ours, is the store's read model as the server sees
	// it (what candidates and gauges are computed from); nil for a
	// reference.
	Snapshot func(context.Context) (*readmodel.Snapshot, error)
}

// Options configures StartOurs.
type Options struct {
	// MaxMicroversion caps our server's microversions, e.g. "1.25".
	MaxMicroversion string
	// OwnerNovaGate, when set, turns the OWNER_NOVA pre-filter on in
	// auto mode, following the gate, for SchedulerUsers.
	OwnerNovaGate  placementsrv.OwnerNovaGate
	SchedulerUsers []string
	// Keystone, when set, makes the server validate Keystone tokens
	// (auth_strategy keystone) instead of noauth2.
	Keystone *KeystoneAuth
	// Release is the upstream release whose rules ours follows (the
	// zero value: 15.0.0).
	Release release.Release
	// Policy, when set, is the compiled policy (enforcement modes, an
	// operator file); nil means Release's defaults in legacy mode.
	Policy *policy.Enforcer
	// The allocation candidate settings, as in placementsrv.Options.
	MaxAllocationCandidates      int
	AllocationCandidatesOrder    string
	OptimizeForWideProviderTrees bool
}

// KeystoneAuth is the server's [keystone_authtoken]: Keystone's v3 URL
// and the service user that validates tokens (in the Default domain).
type KeystoneAuth struct {
	AuthURL, Username, Password, ProjectName string
}

// StartOurs starts placementsrv on 127.0.0.1:0 over a fresh SQLite file in
// t.TempDir(); it stops at cleanup.
func StartOurs(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := dbstore.OpenFile(ctx, filepath.Join(t.TempDir(), "placement.db"), dbstore.Options{Migrate: true})
	if err != nil {
		cancel()
		t.Fatalf("placementtest: open store: %v", err)
	}
	var capv microversion.Version
	if opts.MaxMicroversion != "" {
		if capv, err = microversion.Parse(opts.MaxMicroversion); err != nil {
			cancel()
			t.Fatalf("placementtest: %v", err)
		}
	}
	// /metrics, so that tests can count requests on the server's side.
	reg := prometheus.NewRegistry()
	so := placementsrv.Options{Store: st, MaxMicroversion: capv, Release: opts.Release, Policy: opts.Policy, Registerer: reg, MetricsHandler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	so.MaxAllocationCandidates = opts.MaxAllocationCandidates
	so.AllocationCandidatesOrder = opts.AllocationCandidatesOrder
	so.OptimizeForWideProviderTrees = opts.OptimizeForWideProviderTrees
	if opts.Keystone != nil {
		k := opts.Keystone
		tokens, err := keystone.New(keystone.Options{AuthURL: k.AuthURL, Username: k.Username, Password: k.Password, ProjectName: k.ProjectName})
		if err != nil {
			cancel()
			t.Fatalf("placementtest: %v", err)
		}
		so.Auth, so.Tokens, so.WWWAuthenticateURI = "keystone", tokens, opts.Keystone.AuthURL
	}
	if opts.OwnerNovaGate != nil {
		so.OwnerNovaPrefilter = placementsrv.PrefilterAuto
		so.OwnerNovaGate = opts.OwnerNovaGate
		so.SchedulerUsers = opts.SchedulerUsers
	}
	srv, err := placementsrv.New(so)
	if err != nil {
		cancel()
		t.Fatalf("placementtest: new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("placementtest: listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("placementtest: server: %v", err)
		}
		_ = st.Close()
	})
	v := microversion.Max.String()
	if opts.MaxMicroversion != "" {
		v = opts.MaxMicroversion
	}
	return &Server{Kind: Ours, URL: "http://" + ln.Addr().String(), Token: "admin", Version: v, Release: opts.Release, Snapshot: st.Snapshot}
}

// ServeScriptEnv names an environment variable that overrides where
// serve.sh is looked for.
const ServeScriptEnv = "PLACEMENT_REFERENCE_SERVE"

// StartReference starts the reference OpenStack Placement 8.0.0 with
// ../shared/anchors/openstack-placement/serve.sh (relative to the module
// root or one of its parents) in its own process group on a free port,
// waits until GET / answers, and kills the group at cleanup. It fails —
// never skips — when the script or uWSGI is missing.
func StartReference(t testing.TB) *Server {
	t.Helper()
	return StartReferenceOn(t, "")
}

// StartReferenceOn is StartReference on the database db (an SQLAlchemy
// URL such as sqlite:////tmp/x/placement.db or mysql+pymysql://…); empty
// means a new SQLite file in the run directory. The reference migrates
// the database to its schema at start, as its own deployments do.
func StartReferenceOn(t testing.TB, db string) *Server {
	t.Helper()
	return StartReferenceWith(t, ReferenceOptions{DB: db, Release: release.V8})
}

// ReferenceOptions choose which upstream Placement StartReferenceWith
// starts, and how.
type ReferenceOptions struct {
	// Release is 8.0.0 (Debian's package, serve.sh; the zero value is
	// 15.0.0, from source with serve15-fg.sh).
	Release release.Release
	// DB is as StartReferenceOn's db.
	DB string
	// Env adds the scripts' settings: ENFORCE_SCOPE, ENFORCE_NEW_DEFAULTS,
	// POLICY_FILE, and for 15.0.0 MAX_AC, AC_STRATEGY, WIDE_TREES, PERF.
	Env []string
}

// StartReferenceWith starts the upstream Placement of opts.Release as
// StartReference does.
func StartReferenceWith(t testing.TB, opts ReferenceOptions) *Server {
	t.Helper()
	script, err := findAnchorScript(opts.Release)
	if err != nil {
		t.Fatalf("placementtest: %v", err)
	}
	db := opts.DB
	if _, err := exec.LookPath("uwsgi"); err != nil {
		if _, serr := os.Stat("/usr/bin/uwsgi"); serr != nil {
			t.Fatalf("placementtest: uwsgi is not installed; run ../shared/conformance/install-deps (python3-placement uwsgi-core uwsgi-plugin-python3)")
		}
	}
	port, err := svcproc.FreePort()
	if err != nil {
		t.Fatalf("placementtest: %v", err)
	}
	runDir := t.TempDir()
	if db == "" {
		db = "sqlite:///" + filepath.Join(runDir, "placement.db")
	}
	cmd := exec.Command("bash", script)
	// One worker: the reference keeps its data in SQLite, where two
	// uWSGI workers writing at once get "database is locked" 500s.
	cmd.Env = append(append(os.Environ(), "PORT="+strconv.Itoa(port), "RUN_DIR="+runDir, "WORKERS=1", "DB="+db), opts.Env...)
	proc, err := svcproc.Start(cmd, filepath.Join(runDir, "serve.log"))
	if err != nil {
		t.Fatalf("placementtest: start %s: %v", script, err)
	}
	t.Cleanup(func() {
		if err := proc.Stop(syscall.SIGTERM, 10*time.Second); err != nil {
			t.Errorf("placementtest: stop the reference: %v", err)
		}
		if t.Failed() {
			t.Logf("placementtest: the end of %s's output:\n%s", filepath.Base(script), proc.LogTail(8192))
		}
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(url, proc, 60*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(runDir, "uwsgi.log"))
		t.Fatalf("placementtest: reference placement %s did not start: %v\n%s\n%s", opts.Release, err, proc.LogTail(8192), log)
	}
	return &Server{Kind: Reference, URL: url, Token: "admin", Version: microversion.Max.String(), DB: db, Release: opts.Release}
}

// Start starts a server of the given kind (Ours or Reference).
func Start(t testing.TB, kind string) *Server {
	t.Helper()
	if kind == Reference {
		return StartReference(t)
	}
	return StartOurs(t, Options{})
}

// Kinds is every kind a suite must pass against.
func Kinds() []string { return []string{Ours, Reference} }

// Serve15ScriptEnv names an environment variable that overrides where
// Placement 15.0.0's serve15-fg.sh is looked for.
const Serve15ScriptEnv = "PLACEMENT_REFERENCE15_SERVE"

// findAnchorScript finds the foreground start script of release r's
// reference: ../shared/anchors/openstack-placement/serve.sh for 8.0.0,
// ../shared/anchors/openstack-placement-15/serve15-fg.sh for 15.0.0.
func findAnchorScript(r release.Release) (string, error) {
	env, rel := ServeScriptEnv, filepath.Join("shared", "anchors", "openstack-placement", "serve.sh")
	if r == release.V15 {
		env, rel = Serve15ScriptEnv, filepath.Join("shared", "anchors", "openstack-placement-15", "serve15-fg.sh")
	}
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	// Walk up from the package directory: the module root has ../shared
	// in CI; a git worktree may sit deeper than the main checkout.
	var tried []string
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, rel)
		tried = append(tried, p)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("%s not found (set %s); tried %s", filepath.Base(rel), env, strings.Join(tried, ", "))
}

// waitReady polls GET / until it answers 200, the process exits or the
// deadline passes. Polling a child process's readiness has no event to
// wait on, so this is a bounded retry loop with a short pause.
func waitReady(url string, proc *svcproc.Proc, within time.Duration) error {
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := hc.Get(url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer from %s within %s (last error: %v)", url, within, err)
		}
		if exited, err := proc.Exited(); exited {
			return fmt.Errorf("serve.sh exited: %v", err)
		}
		<-tick.C
	}
}

// Release names an upstream Placement release, for tests that reach the
// servers only through this harness (the differential tester).
type Release = release.Release

// ParseRelease reads a release's version number ("8.0.0", "15.0.0").
func ParseRelease(s string) (Release, error) { return release.Parse(s) }
