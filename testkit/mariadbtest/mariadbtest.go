// Package mariadbtest starts a real MariaDB server (Debian's
// mariadb-server: mariadb-install-db and mariadbd) for tests: on loopback,
// on a random port, with its data directory in a temporary directory, and
// stops it afterwards. Every test that needs MySQL-protocol storage (the
// MySQL store, Nova cell databases, importing Placement's own database)
// starts it through this one package.
package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Server is a running mariadbd.
type Server struct {
	// Addr is host:port of the TCP listener (127.0.0.1 only).
	Addr string
	// User is an account with every privilege, reachable over TCP from
	// 127.0.0.1 without a password.
	User string

	dir   string
	cmd   *exec.Cmd
	done  chan error
	dbSeq atomic.Int64
	// galera holds a cluster node's settings (nil for a lone server);
	// Restart starts the node with them again.
	galera *galeraNode
}

// Binaries are Debian's paths; PATH is searched first.
var binaries = map[string]string{
	"mariadbd":           "/usr/sbin/mariadbd",
	"mariadb-install-db": "/usr/bin/mariadb-install-db",
}

func binary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := binaries[name]
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("mariadbtest: %s %w (install Debian's mariadb-server; ./scripts/test does): %w", name, svcproc.ErrNotInstalled, err)
	}
	return p, nil
}

// Start starts a server for the test and stops it at cleanup. A missing
// mariadb-server fails the test: the tests that need it are not optional.
func Start(t testing.TB) *Server {
	t.Helper()
	return svcproc.ForTest(t, Shared())
}

// Shared is one server for a whole test binary (svcproc's lifecycle):
// call os.Exit(svcproc.RunEager(m, mariadbtest.Shared(), &server)) from
// TestMain, and give each test its own database with NewDatabase.
func Shared() *svcproc.Shared[*Server] {
	return &svcproc.Shared[*Server]{Name: "mariadbtest: MariaDB", Start: StartServer, Stop: (*Server).Stop}
}

// StartServer starts a server outside any one test, for harnesses that
// start once per test binary on top of it (testkit/novatest); the caller
// stops it with Stop.
func StartServer(ctx context.Context) (*Server, error) {
	return start(ctx, os.TempDir())
}

// start installs a fresh data directory under a new directory in base and
// runs mariadbd on it. A port that another process takes between the
// choice and the bind is retried.
func start(ctx context.Context, base string) (*Server, error) {
	dir, err := os.MkdirTemp(base, "mariadb")
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	if err := installDB(ctx, dir, ""); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := svcproc.FreePort()
		if err != nil {
			return nil, err
		}
		s, err := launch(ctx, dir, port, nil)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// installDB installs a data directory in dir owned by user ("" for the
// test's own user).
func installDB(ctx context.Context, dir, user string) error {
	bin, err := binary("mariadb-install-db")
	if err != nil {
		return err
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db"}
	if user == "" && os.Geteuid() == 0 {
		user = "root"
	}
	if user != "" {
		args = append(args, "--user="+user)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if cmd.Env, err = ownTmp(dir); err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadbtest: mariadb-install-db: %w\n%s", err, out)
	}
	return nil
}

// ownTmp is the environment with TMPDIR inside dir: servers bootstrapped
// at once by parallel test binaries otherwise share /tmp's temporary
// table files and fail each other's install.
func ownTmp(dir string) ([]string, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	return append(os.Environ(), "TMPDIR="+tmp), nil
}

// launch runs mariadbd on dir's data directory: a lone server, or a
// Galera node when g is not nil.
func launch(ctx context.Context, dir string, port int, g *galeraNode) (*Server, error) {
	bin, err := binary("mariadbd")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "error.log")
	args := []string{"--no-defaults"}
	if g != nil {
		// A file, not flags: the state transfer scripts read the node's
		// settings from it.
		if args, err = g.defaultsFile(dir, serverFlags(dir, port)); err != nil {
			return nil, err
		}
	} else {
		args = append(args, serverFlags(dir, port)...)
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
	}
	cmd := exec.Command(bin, args...)
	if cmd.Env, err = ownTmp(dir); err != nil {
		return nil, err
	}
	if g != nil {
		if err := g.own(dir); err != nil {
			return nil, err
		}
	}
	// Its own process group: a signal to the test's group does not stop
	// it before cleanup does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mariadbtest: start mariadbd: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), User: "root",
		dir: dir, cmd: cmd, done: make(chan error, 1), galera: g}
	go func() { s.done <- cmd.Wait() }()
	// A joining Galera node opens its port only after its state transfer.
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		_ = s.kill()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("%w\n%s", err, svcproc.Tail(string(log), 2000))
	}
	return s, nil
}

// serverFlags are mariadbd's settings for a server in dir listening on
// port, as command-line flags.
func serverFlags(dir string, port int) []string {
	return []string{
		"--datadir=" + filepath.Join(dir, "data"),
		"--socket=" + filepath.Join(dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"),
		"--log-error=" + filepath.Join(dir, "error.log"),
		"--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--skip-name-resolve",
		// Small: a test server holds little data, and several may run.
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",
		"--max-connections=500"}
}

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("mariadbtest: mariadbd exited during start-up: %v", err)
		default:
		}
		db, err := sql.Open("mysql", s.DSN(""))
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbtest: mariadbd not ready after %s: %w", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Config is the go-sql-driver/mysql configuration of database db ("" for
// none), over TCP, as DSN formats it.
func (s *Server) Config(db string) *mysql.Config {
	c := mysql.NewConfig()
	c.User = s.User
	c.Net = "tcp"
	c.Addr = s.Addr
	c.DBName = db
	c.ParseTime = true
	return c
}

// DSN is a go-sql-driver/mysql data source name for database db ("" for
// none), over TCP.
func (s *Server) DSN(db string) string { return s.Config(db).FormatDSN() }

// URL is the database's address in the form placement.conf and
// database.connection use: mysql+pymysql://user@host:port/db.
func (s *Server) URL(db string) string {
	return "mysql+pymysql://" + s.User + "@" + s.Addr + "/" + db + "?charset=utf8mb4"
}

// NewDatabase creates an empty utf8mb4 database with a name unique within
// this server and returns its name; it is dropped at cleanup, so tests
// that share one server do not see each other's tables.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.dbSeq.Add(1))
	if err := s.Exec(context.Background(), "", "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Exec(context.Background(), "", "DROP DATABASE IF EXISTS "+name); err != nil && !errors.Is(err, errStopped) {
			t.Errorf("mariadbtest: %v", err)
		}
	})
	return name
}

var errStopped = errors.New("mariadbtest: server stopped")

// Exec runs statements on database db ("" for none), one connection.
func (s *Server) Exec(ctx context.Context, db string, stmts ...string) error {
	select {
	case err := <-s.done:
		s.done <- err
		return errStopped
	default:
	}
	conn, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		return fmt.Errorf("mariadbtest: open: %w", err)
	}
	defer conn.Close()
	for _, st := range stmts {
		if _, err := conn.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("mariadbtest: %q: %w", st, err)
		}
	}
	return nil
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 30 s) and
// removes its directory.
func (s *Server) Stop() error {
	defer os.RemoveAll(s.dir)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("mariadbtest: signal mariadbd: %w", err)
	}
	select {
	case err := <-s.done:
		s.done <- err
		return nil
	case <-time.After(30 * time.Second):
		return s.kill()
	}
}

// Kill stops the server at once with SIGKILL, as a crash would; its data
// directory stays, so Restart can bring it back.
func (s *Server) Kill() error { return s.kill() }

// Restart starts mariadbd again on the same data directory and port after
// Kill, as a database node coming back would. Clients reconnect to the
// same Addr.
func (s *Server) Restart(ctx context.Context) error {
	_, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("mariadbtest: %w", err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("mariadbtest: port %q: %w", port, err)
	}
	next, err := launch(ctx, s.dir, n, s.galera)
	if err != nil {
		return err
	}
	s.cmd, s.done = next.cmd, next.done
	return nil
}

func (s *Server) kill() error {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("mariadbtest: kill mariadbd: %w", err)
	}
	err := <-s.done
	s.done <- err
	return nil
}
