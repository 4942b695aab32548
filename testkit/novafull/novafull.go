// Package novafull starts the whole of Debian's Nova (26.2) for tests that
// need Nova's own scheduler to choose hosts through a Placement: a
// RabbitMQ node of its own, nova-api (noauth2), nova-scheduler,
// nova-conductor and nova-computes running python3-nova's fake virt
// driver (or Nova's ironic driver against a real Ironic from
// testkit/ironictest: StartIronicCompute), over a MariaDB from
// testkit/mariadbtest holding the API database, cell0 and one cell.
// Glance and Neutron are doubles answering only what Nova asks of them
// for servers booted with networks "none".
//
// Nova reaches Placement through a router of the harness's, so that one
// Nova (one per test binary: its start-up is the expensive part) serves
// the Placements of several scenarios in turn: UsePlacement points it at
// a fresh Placement and StartComputes starts fresh computes that report
// their providers there. testkit/novatest, by contrast, runs
// nova-api alone with computes as database rows.
package novafull

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	novaAPI   = "/usr/bin/nova-api"
	novaSched = "/usr/bin/nova-scheduler"
	novaCond  = "/usr/bin/nova-conductor"
	fakeVirt  = "/usr/lib/python3/dist-packages/nova/virt/fake.py"
	// Install is what to install when a piece is missing.
	Install = "apt-get install --no-install-recommends nova-api nova-scheduler nova-conductor nova-common python3-nova rabbitmq-server mariadb-server"
)

// Nova is a running Nova with its broker, databases and doubles.
type Nova struct {
	// Client calls the compute API (Do, DoAs, Call) as the admin; its
	// Endpoint is nova-api's, http://127.0.0.1:N/v2.1.
	computeapi.Client
	// Conf is the nova.conf every service reads (computes add their own).
	Conf string
	// DB is the MariaDB holding Nova's databases.
	DB *mariadbtest.Server

	dir       string
	rabbit    *rabbit
	transport string
	glance    *httptest.Server
	neutron   *httptest.Server
	router    *router
	procs     []*svcproc.Proc // nova-api, scheduler, conductor
	apiPort   int

	mu       sync.Mutex
	computes []*svcproc.Proc
	mapped   map[string]bool // hosts discover_hosts has mapped
}

// Shared is one Nova for a whole test binary (svcproc's lifecycle),
// started by the first test that asks for it (Get): call
// os.Exit(svcproc.RunMain(m, nova)) from TestMain to stop it after them.
func Shared() *svcproc.Shared[*Nova] {
	return &svcproc.Shared[*Nova]{Name: "novafull: rabbitmq, nova-api, nova-scheduler and nova-conductor", Start: Start, Stop: (*Nova).Stop}
}

// checkInstalled fails with what to install when a piece is missing.
func checkInstalled() error {
	return novaconf.Missing(Install, novaconf.Python, novaAPI, novaSched, novaCond, novaconf.NovaManage, novaconf.APIPaste,
		fakeVirt, rabbitServer, rabbitCtl, epmd)
}

// Start starts MariaDB, RabbitMQ and the doubles, builds Nova's
// databases and starts nova-api, nova-scheduler and nova-conductor; the
// caller stops it all with Stop. It starts no compute.
func Start(ctx context.Context) (_ *Nova, err error) {
	if err := checkInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "novafull")
	if err != nil {
		return nil, fmt.Errorf("novafull: %w", err)
	}
	n := &Nova{Client: client(), dir: dir, mapped: map[string]bool{}}
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	n.glance, n.neutron, n.router = glanceDouble(), neutronDouble(), newRouter()
	rdir := filepath.Join(dir, "rabbitmq")
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return nil, fmt.Errorf("novafull: %w", err)
	}
	// The broker and the database start together: each takes seconds.
	rc := make(chan error, 1)
	go func() {
		var err error
		if n.rabbit, err = startRabbit(ctx, rdir); err == nil {
			n.transport, err = n.rabbit.vhost(ctx, "nova")
		}
		rc <- err
	}()
	n.DB, err = mariadbtest.StartServer(ctx)
	if err = errors.Join(err, <-rc); err != nil {
		return nil, err
	}
	if err := n.DB.Exec(ctx, "", "CREATE DATABASE nova_api", "CREATE DATABASE nova_cell0", "CREATE DATABASE nova_cell1"); err != nil {
		return nil, fmt.Errorf("novafull: %w", err)
	}
	if err := n.writeConf(); err != nil {
		return nil, err
	}
	if err := n.buildSchemas(ctx); err != nil {
		return nil, err
	}
	return n, n.startServices(ctx)
}

// env is a clean environment for Debian's Python.
func (n *Nova) env() []string { return svcproc.Env(n.dir, n.dir) }

// Manage runs nova-manage with the harness's nova.conf.
func (n *Nova) Manage(ctx context.Context, args ...string) (string, error) {
	return novaconf.Manage(ctx, n.dir, []string{n.Conf}, args...)
}

// buildSchemas syncs the API database, maps cell0 and creates cell1 on
// the broker's vhost, while each cell's schema is synced beside it (each
// is its own database, and the syncs take most of the start-up).
func (n *Nova) buildSchemas(ctx context.Context) error {
	cell0 := filepath.Join(n.dir, "cell0.conf")
	if err := novaconf.WriteDatabase(cell0, novaconf.DatabaseURL(n.DB, "nova_cell0")); err != nil {
		return err
	}
	conf := []string{n.Conf}
	return novaconf.ManageBeside(ctx, n.dir,
		[]novaconf.Run{{Confs: conf, Args: []string{"api_db", "sync"}},
			{Confs: conf, Args: []string{"cell_v2", "map_cell0", "--database_connection", novaconf.DatabaseURL(n.DB, "nova_cell0")}},
			{Confs: conf, Args: []string{"cell_v2", "create_cell", "--name", "cell1", "--database_connection", novaconf.DatabaseURL(n.DB, "nova_cell1"), "--transport-url", n.transport}}},
		[]novaconf.Run{{Confs: conf, Args: []string{"db", "sync", "--local_cell"}}},
		[]novaconf.Run{{Confs: []string{n.Conf, cell0}, Args: []string{"db", "sync", "--local_cell"}}})
}

// startServices starts nova-api, nova-scheduler and nova-conductor and
// waits until the API answers and lists the other two as up.
func (n *Nova) startServices(ctx context.Context) error {
	for _, bin := range []string{novaAPI, novaSched, novaCond} {
		cmd := exec.Command(novaconf.Python, bin, "--config-file", n.Conf)
		cmd.Env, cmd.Dir = n.env(), n.dir
		p, err := svcproc.Start(cmd, filepath.Join(n.dir, filepath.Base(bin)+".log"))
		if err != nil {
			return fmt.Errorf("novafull: start %s: %w", bin, err)
		}
		n.procs = append(n.procs, p)
	}
	n.Endpoint = fmt.Sprintf("http://127.0.0.1:%d/v2.1", n.apiPort)
	return n.waitServices(ctx, []string{"nova-scheduler", "nova-conductor"}, nil, 180*time.Second)
}

// Logs is the end of every Nova service's log, for failure messages.
func (n *Nova) Logs() string {
	var b strings.Builder
	n.mu.Lock()
	procs := append(append([]*svcproc.Proc{}, n.procs...), n.computes...)
	n.mu.Unlock()
	for _, p := range procs {
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(p.Log), p.LogTail(3000))
	}
	return b.String()
}

// Stop stops the computes, Nova's services, the broker, the doubles and
// MariaDB, and removes the temporary directory.
func (n *Nova) Stop() error {
	var errs []error
	n.StopComputes()
	for i := len(n.procs) - 1; i >= 0; i-- {
		errs = append(errs, n.procs[i].Stop(syscall.SIGTERM, 15*time.Second))
	}
	if n.rabbit != nil {
		n.rabbit.stop()
	}
	for _, s := range []*httptest.Server{n.glance, n.neutron} {
		if s != nil {
			s.Close()
		}
	}
	if n.router != nil {
		n.router.Close()
	}
	if n.DB != nil {
		errs = append(errs, n.DB.Stop())
	}
	if os.Getenv("NOVAFULL_KEEP") == "" {
		errs = append(errs, os.RemoveAll(n.dir))
	} else {
		fmt.Fprintf(os.Stderr, "novafull: kept %s\n", n.dir)
	}
	return errors.Join(errs...)
}
