// Package novatest starts Debian's real nova-api (26.2, package nova-api)
// under uWSGI for tests: noauth2, on 127.0.0.1 and a random port, over a
// MariaDB from testkit/mariadbtest holding Nova's own API database, cell0
// and two cells (cell1, cell2) built by nova-manage. Compute services and
// compute nodes are rows in the cell databases (there is no nova-compute),
// mapped by `nova-manage cell_v2 discover_hosts`; aggregates, disables,
// forced-down and service deletes go through the real API.
// StartKeystoneAPI adds a second nova-api over the same databases that
// validates a real Keystone's tokens instead (keystone.go).
//
// Each cell's database is reached by its own MariaDB user, so that a test
// can make a cell unreadable (Unreadable) the way a lost grant or a
// failed database would, for nova-api and every other reader alike.
package novatest

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
	"sync"
	"syscall"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/computeapi"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/novaconf"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Debian's paths besides novaconf's.
const (
	uwsgi    = "/usr/bin/uwsgi"
	novaWSGI = "/usr/bin/nova-api-wsgi"
	// Install is what to install when a piece is missing.
	Install = "apt-get install nova-api nova-common uwsgi-core uwsgi-plugin-python3 mariadb-server"
)

// MaxLimit is nova-api's [api] max_limit here: small, so that listings
// that page (hypervisors) take several pages with a handful of hosts.
const MaxLimit = 3

// cellNames are the cells this harness creates, besides cell0.
func cellNames() []string { return []string{"cell1", "cell2"} }

// Nova is a running nova-api with its databases.
type Nova struct {
	// Client calls the compute API (Do, Call) as the admin; its Endpoint
	// is nova-api's, http://127.0.0.1:N/v2.1.
	computeapi.Client
	// Root is the server's root (the version document, answered with 300).
	Root string
	// DB is the MariaDB holding Nova's databases.
	DB *mariadbtest.Server
	// APIDatabase is the nova_api database's URL in Nova's form
	// (mysql+pymysql://…?charset=utf8), as [api_database] connection.
	APIDatabase string
	// Cell0 is cell0's database in the same form (it holds no
	// services: the instances no cell would take).
	Cell0 string
	// Conf is the nova.conf nova-api and nova-manage read.
	Conf string

	dir       string
	cells     map[string]*Cell
	api       *apiProc
	stub      *http.Server
	stubErr   chan error
	stubAddrV string
	mu        sync.Mutex // serialises nova-manage runs and host ids
	nextID    int
}

// Cell is one of the harness's cells.
type Cell struct {
	Name string
	// Database is its MariaDB database, User the account Nova's cell
	// mapping (and readers taking the mapping) use to reach it.
	Database, User, Password string
	// URL is the cell's database in Nova's form, as in cell_mappings.
	URL string
}

// Cell returns the named cell (cell1 or cell2).
func (n *Nova) Cell(name string) *Cell { return n.cells[name] }

// Shared is one Nova for a whole test binary (svcproc's lifecycle),
// started by the first test that asks for it (Get), so that tests that
// do not need Nova do not pay for its start-up: call
// os.Exit(svcproc.RunMain(m, nova)) from TestMain to stop it after them.
func Shared() *svcproc.Shared[*Nova] {
	return &svcproc.Shared[*Nova]{Name: "novatest: nova-api with 2 cells", Start: Start, Stop: (*Nova).Stop}
}

// checkInstalled fails with what to install when a piece is missing.
func checkInstalled() error {
	if err := novaconf.Missing(Install, novaconf.Python, uwsgi, novaWSGI, novaconf.NovaManage, novaconf.APIPaste); err != nil {
		return err
	}
	if _, err := os.Stat("/usr/lib/uwsgi/plugins/python3_plugin.so"); err != nil {
		return fmt.Errorf("novatest: uWSGI's python3 plugin %w (%s): %w", svcproc.ErrNotInstalled, Install, err)
	}
	return nil
}

// Start starts MariaDB, builds Nova's databases with nova-manage and
// starts nova-api; the caller stops it with Stop.
func Start(ctx context.Context) (_ *Nova, err error) {
	if err := checkInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "novatest")
	if err != nil {
		return nil, fmt.Errorf("novatest: %w", err)
	}
	n := &Nova{dir: dir, cells: map[string]*Cell{}, nextID: 1}
	n.Client = n.client()
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	if n.DB, err = mariadbtest.StartServer(ctx); err != nil {
		return nil, err
	}
	if err := n.startStub(); err != nil {
		return nil, err
	}
	if err := n.createDatabases(ctx); err != nil {
		return nil, err
	}
	if err := n.writeConf(); err != nil {
		return nil, err
	}
	if err := n.buildSchemas(ctx); err != nil {
		return nil, err
	}
	if err := n.startAPI(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// createDatabases creates nova_api, nova_cell0 and one database and user
// per cell.
func (n *Nova) createDatabases(ctx context.Context) error {
	stmts := []string{"CREATE DATABASE nova_api", "CREATE DATABASE nova_cell0"}
	for _, name := range cellNames() {
		c := &Cell{Name: name, Database: "nova_" + name, User: "nova_" + name, Password: "secret-" + name}
		c.URL = fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?charset=utf8", c.User, c.Password, n.DB.Addr, c.Database)
		n.cells[name] = c
		stmts = append(stmts, "CREATE DATABASE "+c.Database,
			fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'", c.User, c.Password),
			c.grant())
	}
	if err := n.DB.Exec(ctx, "", stmts...); err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	n.APIDatabase, n.Cell0 = novaconf.DatabaseURL(n.DB, "nova_api"), novaconf.DatabaseURL(n.DB, "nova_cell0")
	return nil
}

func (c *Cell) grant() string {
	return fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'127.0.0.1'", c.Database, c.User)
}

// writeConf writes nova.conf: noauth2, a fake transport (no broker; the
// computes are seen down, so nova-api calls none), a small max_limit, and a
// Placement with no providers for nova-api's own aggregate mirroring.
func (n *Nova) writeConf() error {
	n.Conf = filepath.Join(n.dir, "nova.conf")
	own := fmt.Sprintf(`[DEFAULT]
transport_url = fake://
state_path = %[1]s/state
log_dir = %[1]s/log
use_stderr = true
[api]
auth_strategy = noauth2
max_limit = %[2]d
`, n.dir, MaxLimit)
	err := novaconf.Write(n.Conf, own, novaconf.Shared{Dir: n.dir, APIDatabase: n.APIDatabase,
		Database: n.Cell0, Placement: "http://" + n.stubAddr()})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(n.dir, "log"), 0o700); err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	paste, err := os.ReadFile(novaconf.APIPaste)
	if err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	// nova-api reads its paste pipeline from the first file of its
	// config directory.
	if err := os.WriteFile(filepath.Join(n.dir, "api-paste.ini"), paste, 0o600); err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	return nil
}

// env is a clean environment for Debian's Python: nothing of the test
// process's (a pyenv on PATH, PYTHONPATH) leaks in.
func (n *Nova) env(extra ...string) []string {
	return svcproc.Env(n.dir, n.dir, extra...)
}

// Manage runs nova-manage with the harness's nova.conf (and extra config
// files) and returns its output.
func (n *Nova) Manage(ctx context.Context, confs []string, args ...string) (string, error) {
	return novaconf.Manage(ctx, n.dir, append([]string{n.Conf}, confs...), args...)
}

// buildSchemas runs api_db sync, maps cell0 and creates the cells, while
// each cell's schema is synced beside it (each is its own database).
func (n *Nova) buildSchemas(ctx context.Context) error {
	conf := []string{n.Conf}
	setup := []novaconf.Run{{Confs: conf, Args: []string{"api_db", "sync"}},
		{Confs: conf, Args: []string{"cell_v2", "map_cell0", "--database_connection", n.Cell0}}}
	syncs := [][]novaconf.Run{{{Confs: conf, Args: []string{"db", "sync", "--local_cell"}}}}
	for _, name := range cellNames() {
		c := n.cells[name]
		// Each cell its own transport URL: nova-manage refuses two cells
		// with the same one. The fake driver needs no broker.
		setup = append(setup, novaconf.Run{Confs: conf, Args: []string{"cell_v2", "create_cell", "--name", name,
			"--database_connection", c.URL, "--transport-url", "fake://" + name + "/"}})
		cellConf := filepath.Join(n.dir, name+".conf")
		if err := novaconf.WriteDatabase(cellConf, c.URL); err != nil {
			return err
		}
		syncs = append(syncs, []novaconf.Run{{Confs: []string{n.Conf, cellConf}, Args: []string{"db", "sync", "--local_cell"}}})
	}
	return novaconf.ManageBeside(ctx, n.dir, append([][]novaconf.Run{setup}, syncs...)...)
}

// startAPI starts the noauth2 nova-api the helpers talk to.
func (n *Nova) startAPI(ctx context.Context) error {
	p, err := n.startProc(ctx, "nova-api", "nova.conf", Token)
	if err != nil {
		return err
	}
	n.api, n.Root, n.Endpoint = p, p.root, p.root+"v2.1"
	return nil
}

// apiProc is one nova-api under uWSGI, in a process group of its own.
type apiProc struct {
	*svcproc.Proc
	root string // http://127.0.0.1:N/
}

// startProc runs nova-api under uWSGI with nova.conf followed by extra
// config files (";"-separated, in n.dir), logging to name.log, and waits
// until token lists os-services. A port taken between the choice and the
// bind is retried.
func (n *Nova) startProc(ctx context.Context, name, confs, token string) (*apiProc, error) {
	var last error
	for range 3 {
		port, err := svcproc.FreePort()
		if err != nil {
			return nil, err
		}
		p, err := n.launch(name, confs, port)
		if err == nil {
			if err = p.waitReady(ctx, token, 90*time.Second); err == nil {
				return p, nil
			}
			_ = p.stop()
			err = fmt.Errorf("%w\n%s", err, p.LogTail(4000))
		}
		last = err
	}
	return nil, last
}

func (n *Nova) launch(name, confs string, port int) (*apiProc, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ini := fmt.Sprintf(`[uwsgi]
plugins = python3
http-socket = %s
wsgi-file = %s
master = true
processes = 2
threads = 1
enable-threads = true
lazy-apps = true
die-on-term = true
no-orphans = true
buffer-size = 65535
need-app = true
`, addr, novaWSGI)
	iniPath := filepath.Join(n.dir, name+".ini")
	if err := os.WriteFile(iniPath, []byte(ini), 0o600); err != nil {
		return nil, fmt.Errorf("novatest: %w", err)
	}
	cmd := exec.Command(uwsgi, "--ini", iniPath)
	// The paste pipeline is read from the first file of the config
	// directory; later files override earlier ones.
	cmd.Env = n.env("OS_NOVA_CONFIG_DIR="+n.dir, "OS_NOVA_CONFIG_FILES=api-paste.ini;"+confs)
	cmd.Dir = n.dir
	sp, err := svcproc.Start(cmd, filepath.Join(n.dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("novatest: start uwsgi: %w", err)
	}
	return &apiProc{Proc: sp, root: "http://" + addr + "/"}, nil
}

// Log is nova-api's log so far.
func (n *Nova) Log() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "nova-api.log"))
	return string(b)
}

// waitReady waits until a GET of os-services with token answers 200.
func (p *apiProc) waitReady(ctx context.Context, token string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("novatest: nova-api exited during start-up: %v", err)
		}
		code, err := p.probe(ctx, token)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("novatest: nova-api not ready after %s (last: %d %v)", limit, code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *apiProc) probe(ctx context.Context, token string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.root+"v2.1/os-services", nil)
	if err != nil {
		return 0, fmt.Errorf("novatest: %w", err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("novatest: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// stop ends uWSGI's process group: SIGTERM, SIGKILL after 20 s.
func (p *apiProc) stop() error {
	if p == nil {
		return nil
	}
	_ = p.Stop(syscall.SIGTERM, 20*time.Second)
	return nil
}

// Stop stops nova-api, the Placement stand-in and MariaDB, and removes
// the temporary directory.
func (n *Nova) Stop() error {
	var errs []error
	errs = append(errs, n.api.stop(), n.stopStub())
	n.api = nil
	if n.DB != nil {
		errs = append(errs, n.DB.Stop())
	}
	errs = append(errs, os.RemoveAll(n.dir))
	return errors.Join(errs...)
}
