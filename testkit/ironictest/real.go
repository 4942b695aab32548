package ironictest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Debian's ironic-api, ironic-conductor and ironic-dbsync (package
// version 21.4, API microversions up to 1.82). They are Python scripts
// for /usr/bin/python3, started by their full path so that another
// python3 on PATH is never used.
var ironicBinaries = []string{"/usr/bin/ironic-api", "/usr/bin/ironic-conductor", "/usr/bin/ironic-dbsync"}

// Options configures a real Ironic.
type Options struct {
	// MaxLimit is [api] max_limit, the largest page Ironic answers; 0
	// keeps Ironic's default of 1000. Tests use 10 so that every listing
	// pages.
	MaxLimit int
	// CallbackTimeout is how long Ironic waits for a ramdisk that never
	// calls back before a node goes to "clean failed" (or "deploy failed",
	// "rescue failed"); 0 means 5 s.
	CallbackTimeout time.Duration
	// Ready bounds the start-up; 0 means 3 minutes (two Python services
	// importing on a busy machine).
	Ready time.Duration
}

// Ironic is a running standalone Ironic: ironic-api and one
// ironic-conductor on loopback, noauth, JSON-RPC between them, a SQLite
// database, the fake-hardware driver with fake interfaces.
type Ironic struct {
	// URL is the API endpoint including /v1, as the driver's endpoint
	// option takes it.
	URL string
	// StartUp is how long the start took, schema included.
	StartUp time.Duration

	dir   string
	root  string // http://127.0.0.1:port
	hc    *http.Client
	procs []*proc // the conductor, then the API
	// opts and the ports rewrite the configuration (SetMaxLimit).
	opts             Options
	apiPort, rpcPort int
	conductors       int // started by StartConductor
}

// proc is one service in its own process group.
type proc struct {
	name string
	*svcproc.Proc
}

// Start starts a real Ironic for the test and stops it at cleanup. A
// missing package fails the test with what to install.
func Start(t testing.TB, o Options) *Ironic {
	t.Helper()
	return svcproc.ForTest(t, Shared(o))
}

// Shared is one real Ironic for a whole test binary (svcproc's
// lifecycle), started by the first test that asks for it (Get): call
// os.Exit(svcproc.RunMain(m, realIronic)) from TestMain to stop it after
// the tests. Tests sharing it must delete the nodes they create (Cleanup
// does that for nodes made through the helpers) and must not run in
// parallel with each other.
func Shared(o Options) *svcproc.Shared[*Ironic] {
	return &svcproc.Shared[*Ironic]{Name: "ironictest: real Ironic",
		Start: func(ctx context.Context) (*Ironic, error) { return start(ctx, o) },
		Stop:  (*Ironic).Stop}
}

func checkInstalled() error {
	for _, b := range ironicBinaries {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("ironictest: %s is missing (%w): install Debian's Ironic "+
				"(apt-get install ironic-api ironic-conductor; ./scripts/test does): %w", b, svcproc.ErrNotInstalled, err)
		}
	}
	return nil
}

func start(ctx context.Context, o Options) (_ *Ironic, err error) {
	began := time.Now()
	if err := checkInstalled(); err != nil {
		return nil, err
	}
	if o.CallbackTimeout == 0 {
		o.CallbackTimeout = 5 * time.Second
	}
	if o.Ready == 0 {
		o.Ready = 3 * time.Minute
	}
	dir, err := os.MkdirTemp("", "ironictest")
	if err != nil {
		return nil, fmt.Errorf("ironictest: %w", err)
	}
	ir := &Ironic{dir: dir, hc: &http.Client{Timeout: 60 * time.Second}, opts: o}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, ir.logTails())
			_ = ir.Stop()
		}
	}()
	if ir.apiPort, err = svcproc.FreePort(); err != nil {
		return nil, err
	}
	if ir.rpcPort, err = svcproc.FreePort(); err != nil {
		return nil, err
	}
	ir.root = "http://127.0.0.1:" + strconv.Itoa(ir.apiPort)
	ir.URL = ir.root + "/v1"
	conf, err := writeConfig(dir, o, ir.apiPort, ir.rpcPort)
	if err != nil {
		return nil, err
	}
	if err := runDBSync(ctx, dir, conf); err != nil {
		return nil, err
	}
	for _, name := range []string{"ironic-conductor", "ironic-api"} {
		p, err := launch(dir, name, conf, name)
		if err != nil {
			return nil, err
		}
		ir.procs = append(ir.procs, p)
	}
	if err := ir.waitReady(ctx, o.Ready); err != nil {
		return nil, err
	}
	ir.StartUp = time.Since(began)
	return ir, nil
}

// cleanEnv is the services' whole environment: Debian's paths only, so
// that no virtualenv or PYTHONPATH of the caller's reaches them.
func cleanEnv(dir string) []string {
	return svcproc.Env(dir, filepath.Join(dir, "tmp"))
}

func runDBSync(ctx context.Context, dir, conf string) error {
	cmd := exec.CommandContext(ctx, "/usr/bin/ironic-dbsync", "--config-file", conf, "create_schema")
	cmd.Env = cleanEnv(dir)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ironictest: ironic-dbsync create_schema: %w\n%s", err, svcproc.Tail(string(out), 3000))
	}
	// Write-ahead logging, which stays with the file: readers no longer
	// block the writer, and the services' writes fail with "database is
	// locked" far less often.
	wal := exec.CommandContext(ctx, "/usr/bin/python3", "-c",
		"import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL')", filepath.Join(dir, "ironic.sqlite"))
	wal.Env = cleanEnv(dir)
	if out, err := wal.CombinedOutput(); err != nil {
		return fmt.Errorf("ironictest: WAL mode: %w\n%s", err, out)
	}
	return nil
}

// launch starts /usr/bin/<name> on conf, logging to dir/<logName>.log.
func launch(dir, name, conf, logName string) (*proc, error) {
	cmd := exec.Command("/usr/bin/"+name, "--config-file", conf)
	cmd.Env = cleanEnv(dir)
	cmd.Dir = dir
	// Stop ends the service and anything it forked (API workers) together.
	sp, err := svcproc.Start(cmd, filepath.Join(dir, logName+".log"))
	if err != nil {
		return nil, fmt.Errorf("ironictest: start %s: %w", name, err)
	}
	return &proc{name: name, Proc: sp}, nil
}

// waitReady polls GET /v1 until the API answers, then the conductor list
// until a conductor is alive: before that, enrolling a node fails with
// "No valid host was found".
func (ir *Ironic) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range ir.procs {
			if exited, err := p.Exited(); exited {
				return fmt.Errorf("ironictest: %s exited during start-up: %v", p.name, err)
			}
		}
		if last = ir.conductorAlive(ctx); last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("ironictest: Ironic not ready after %s: %w", limit, last)
}

func (ir *Ironic) conductorAlive(ctx context.Context) error {
	var v1 struct {
		ID string `json:"id"`
	}
	if err := ir.getJSON(ctx, "/v1", &v1); err != nil {
		return err
	}
	var doc struct {
		Conductors []struct {
			Alive bool `json:"alive"`
		} `json:"conductors"`
	}
	if err := ir.getJSON(ctx, "/v1/conductors", &doc); err != nil {
		return err
	}
	for _, c := range doc.Conductors {
		if c.Alive {
			return nil
		}
	}
	return errors.New("no conductor alive yet")
}

// Stop kills both services' process groups (SIGTERM, SIGKILL after 10 s)
// and removes the directory.
func (ir *Ironic) Stop() error {
	defer os.RemoveAll(ir.dir)
	var errs []error
	for _, p := range ir.procs {
		if err := p.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	ir.procs = nil
	return errors.Join(errs...)
}

func (p *proc) stop() error {
	if err := p.Stop(syscall.SIGTERM, 10*time.Second); err != nil {
		return fmt.Errorf("ironictest: %s: %w", p.name, err)
	}
	return nil
}

func (ir *Ironic) logTails() string {
	var s string
	for _, p := range ir.procs {
		s += "\n--- " + p.name + " log ---\n" + p.LogTail(2000)
	}
	return s
}
