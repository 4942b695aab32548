// Package keystonetest starts a real Keystone (Debian's keystone 22 under
// uWSGI) for tests: on loopback, on a random port, with SQLite and fernet
// keys in a temporary directory, bootstrapped with keystone-manage and
// given a fixed set of users, projects and roles (see fixture.go). It is
// stopped, with its whole process group, afterwards.
//
// Keystone is Python from Debian's packages: it runs under /usr/bin/python3
// with a clean environment, since the python3 first on a developer's PATH
// may not see Debian's packages.
package keystonetest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Binaries the harness runs, at Debian's paths.
const (
	keystoneManage = "/usr/bin/keystone-manage"
	keystoneWSGI   = "/usr/bin/keystone-wsgi-public"
	uwsgiBinary    = "/usr/bin/uwsgi"
	uwsgiPython    = "/usr/lib/uwsgi/plugins/python3_plugin.so"
)

// install is what to run when a binary is missing.
const install = "apt-get install keystone uwsgi-core uwsgi-plugin-python3 (./scripts/test installs them)"

// cleanEnv is the environment of every Keystone process: Debian's Python
// first, and nothing inherited from the test's shell.
func cleanEnv(dir, conf string) []string {
	return svcproc.Env(dir, dir, "OS_KEYSTONE_CONFIG_FILES="+conf)
}

// Options configures a Keystone.
type Options struct {
	// TokenExpiration is the lifetime of the tokens it issues (default
	// 1h; whole seconds).
	TokenExpiration time.Duration
}

// Keystone is a running Keystone.
type Keystone struct {
	// URL is the root, e.g. http://127.0.0.1:41234; the v3 API is at
	// AuthURL().
	URL string
	// StartupTime is how long Start took, set-up and fixture included.
	StartupTime time.Duration

	dir    string
	proc   *process
	admin  string            // a project-scoped admin token
	ids    map[string]string // names of projects, users and roles to IDs
	issuer bool              // shares another Keystone's state (stop removes nothing)
	// regions numbers the regions Catalog creates.
	regions atomic.Int64
}

// AuthURL is the v3 API: what auth_url in clouds.yaml and
// keystone_authtoken name.
func (k *Keystone) AuthURL() string { return k.URL + "/v3" }

// Start starts a Keystone for the test and stops it at cleanup. A missing
// package fails the test with what to install.
func Start(t testing.TB, opts Options) *Keystone {
	t.Helper()
	return svcproc.ForTest(t, Shared(opts))
}

// Shared is one Keystone for a whole test binary (svcproc's lifecycle):
// call os.Exit(svcproc.RunEager(m, keystonetest.Shared(opts), &ks)) from
// TestMain to start it before the tests and stop it after them.
func Shared(opts Options) *svcproc.Shared[*Keystone] {
	return &svcproc.Shared[*Keystone]{Name: "keystonetest: Keystone",
		Start: func(ctx context.Context) (*Keystone, error) { return start(ctx, opts) },
		Stop:  (*Keystone).Stop}
}

func checkInstalled() error {
	for _, p := range []string{keystoneManage, keystoneWSGI, uwsgiBinary, uwsgiPython} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("keystonetest: %s is missing (%w): %s: %w", p, svcproc.ErrNotInstalled, install, err)
		}
	}
	return nil
}

func start(ctx context.Context, opts Options) (_ *Keystone, err error) {
	began := time.Now()
	if err := checkInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "keystonetest")
	if err != nil {
		return nil, fmt.Errorf("keystonetest: %w", err)
	}
	k := &Keystone{dir: dir}
	defer func() {
		if err != nil {
			_ = k.Stop()
		}
	}()
	conf, err := writeConfig(dir, "keystone.conf", opts.TokenExpiration)
	if err != nil {
		return nil, err
	}
	port, err := svcproc.FreePort()
	if err != nil {
		return nil, err
	}
	k.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := setUp(ctx, dir, conf, k.AuthURL()); err != nil {
		return nil, err
	}
	if k.proc, err = launch(ctx, dir, conf, port); err != nil {
		return nil, err
	}
	if err := k.loadFixture(ctx); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, k.proc.logTail())
	}
	k.StartupTime = time.Since(began)
	return k, nil
}

// writeConfig writes a keystone.conf for state kept in dir. Bcrypt at its
// fewest rounds: users are created at every start.
func writeConfig(dir, name string, expiration time.Duration) (string, error) {
	secs := int(expiration / time.Second)
	if secs <= 0 {
		secs = 3600
	}
	conf := fmt.Sprintf(`[DEFAULT]
log_dir = %[1]s
log_file = keystone.log
[database]
connection = sqlite:///%[1]s/keystone.db
[identity]
password_hash_rounds = 4
[token]
provider = fernet
expiration = %[2]d
[fernet_tokens]
key_repository = %[1]s/fernet-keys
[fernet_receipts]
key_repository = %[1]s/fernet-keys
[credential]
key_repository = %[1]s/credential-keys
[catalog]
driver = sql
`, dir, secs)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", fmt.Errorf("keystonetest: %w", err)
	}
	return path, nil
}

// setUp creates the database, the fernet and credential keys and the
// bootstrap admin, region and identity endpoint. The keys do not need
// the database, so they are made while it is created.
func setUp(ctx context.Context, dir, conf, authURL string) error {
	u, err := user.Current()
	if err != nil {
		return fmt.Errorf("keystonetest: %w", err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return fmt.Errorf("keystonetest: %w", err)
	}
	owner := []string{"--keystone-user", u.Username, "--keystone-group", g.Name}
	keys := make(chan error, 1)
	go func() {
		err := manage(ctx, dir, conf, append([]string{"fernet_setup"}, owner...)...)
		if err == nil {
			err = manage(ctx, dir, conf, append([]string{"credential_setup"}, owner...)...)
		}
		keys <- err
	}()
	err = manage(ctx, dir, conf, "db_sync")
	if kerr := <-keys; err == nil {
		err = kerr
	}
	if err == nil {
		err = walMode(ctx, dir, conf)
	}
	if err != nil {
		return err
	}
	return manage(ctx, dir, conf, "bootstrap", "--bootstrap-password", Password,
		"--bootstrap-region-id", Region, "--bootstrap-public-url", authURL)
}

// walMode switches Keystone's database to write-ahead logging, for good.
// Keystone can keep a read transaction open after an answer (a failed
// lookup's traceback holds its connection), and in SQLite's default mode
// that open read locks every later write out.
func walMode(ctx context.Context, dir, conf string) error {
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c",
		"import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL').fetchone()[0])",
		filepath.Join(dir, "keystone.db"))
	cmd.Env = cleanEnv(dir, conf)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "wal" {
		return fmt.Errorf("keystonetest: switch Keystone's SQLite database to WAL: %v: %s", err, out)
	}
	return nil
}

// manage runs one keystone-manage command.
func manage(ctx context.Context, dir, conf string, args ...string) error {
	cmd := exec.CommandContext(ctx, keystoneManage, append([]string{"--config-file", conf}, args...)...)
	cmd.Env = cleanEnv(dir, conf)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("keystonetest: keystone-manage %s: %w\n%s", args[0], err, tail(string(out), 3000))
	}
	return nil
}

// process is a uWSGI master and its workers, in a process group of
// their own.
type process struct {
	*svcproc.Proc
}

// launch runs Keystone under uWSGI on port and waits until GET /v3
// answers 200.
func launch(ctx context.Context, dir, conf string, port int) (*process, error) {
	// One process of one thread: Keystone's SQLite connections fail when
	// a thread other than their own closes them, and a test's load needs
	// no more. Every answer closes its connection, so that a client never
	// reuses one that uWSGI has already dropped.
	cmd := exec.Command(uwsgiBinary, "--plugins", "python3",
		"--http-socket", "127.0.0.1:"+strconv.Itoa(port), "--wsgi-file", keystoneWSGI,
		"--master", "--processes", "1", "--lazy-apps", "--die-on-term",
		"--need-app", "--buffer-size", "65535", "--add-header", "Connection: close")
	cmd.Env = cleanEnv(dir, conf)
	cmd.Dir = dir
	sp, err := svcproc.Start(cmd, filepath.Join(dir, fmt.Sprintf("uwsgi-%d.log", port)))
	if err != nil {
		return nil, fmt.Errorf("keystonetest: start uwsgi: %w", err)
	}
	p := &process{sp}
	if err := p.waitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+"/v3", 2*time.Minute); err != nil {
		_ = p.stop()
		return nil, err
	}
	return p, nil
}

func (p *process) waitReady(ctx context.Context, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("keystonetest: uwsgi exited during start-up: %v\n%s", err, p.logTail())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("keystonetest: %w", err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /v3 answered %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("keystonetest: Keystone not ready after %s: %w\n%s", limit, err, p.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logTail is the end of uWSGI's log and of Keystone's own.
func (p *process) logTail() string {
	ks, _ := os.ReadFile(filepath.Join(filepath.Dir(p.Log), "keystone.log"))
	return tail(p.ReadLog(), 1500) + "\n" + tail(string(ks), 3000)
}

// stop ends the process group: SIGINT, on which uWSGI stops at once
// (SIGTERM waits for its workers' graceful end), then SIGKILL after 15 s.
func (p *process) stop() error {
	if err := p.Stop(syscall.SIGINT, 15*time.Second); err != nil {
		return fmt.Errorf("keystonetest: uwsgi: %w", err)
	}
	return nil
}

// Stop stops Keystone and removes its state.
func (k *Keystone) Stop() error {
	var err error
	if k.proc != nil {
		err = k.proc.stop()
		k.proc = nil
	}
	// KEYSTONETEST_KEEP=1 keeps the directory, logs included, to debug.
	if os.Getenv("KEYSTONETEST_KEEP") == "" && !k.issuer && k.dir != "" {
		if rerr := os.RemoveAll(k.dir); err == nil && rerr != nil {
			err = fmt.Errorf("keystonetest: %w", rerr)
		}
	}
	return err
}

// StartIssuer starts a second Keystone over this one's database and keys
// whose tokens live for expiration: each accepts the other's tokens, so a
// test gets short-lived tokens without a Keystone of its own. It is
// stopped at cleanup.
func (k *Keystone) StartIssuer(t testing.TB, expiration time.Duration) *Keystone {
	t.Helper()
	conf, err := writeConfig(k.dir, fmt.Sprintf("issuer-%d.conf", time.Now().UnixNano()), expiration)
	if err == nil {
		var port int
		if port, err = svcproc.FreePort(); err == nil {
			is := &Keystone{URL: "http://127.0.0.1:" + strconv.Itoa(port), dir: k.dir, ids: k.ids, admin: k.admin, issuer: true}
			if is.proc, err = launch(context.Background(), k.dir, conf, port); err == nil {
				t.Cleanup(func() {
					if err := is.Stop(); err != nil {
						t.Errorf("keystonetest: %v", err)
					}
				})
				return is
			}
		}
	}
	t.Fatalf("keystonetest: start an issuer: %v", err)
	return nil
}

// tail is the end of a log or an answer, without its trailing newline.
func tail(s string, n int) string { return svcproc.Tail(strings.TrimSpace(s), n) }

// CloudsEntry is one clouds.yaml entry, indented to sit under `clouds:`,
// that logs user in to project with password auth against this Keystone
// and takes endpoints from region's catalog: what a test's client reads.
func (k *Keystone) CloudsEntry(name, region, user, project string) string {
	return "  " + name + ":\n    region_name: " + region + "\n    auth:\n      auth_url: " + k.AuthURL() +
		"\n      username: " + user + "\n      password: " + Password + "\n      project_name: " + project +
		"\n      user_domain_name: Default\n      project_domain_name: Default\n"
}
