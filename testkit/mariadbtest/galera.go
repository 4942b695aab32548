package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// galeraProvider is where Debian's galera-4 installs the wsrep provider.
const galeraProvider = "/usr/lib/galera/libgalera_smm.so"

// Cluster is a running Galera cluster of mariadbd nodes on loopback.
type Cluster struct {
	// Nodes are the cluster's servers; Nodes[0] bootstrapped it.
	Nodes []*Server

	dir string
}

// galeraNode is one node's cluster settings. The group communication,
// incremental (IST) and snapshot (SST) state transfers listen on ports
// of their own, so several clusters can run on one host.
type galeraNode struct {
	name      string
	members   string // gcomm:// list of every node's group port
	gmcast    int
	ist, sst  int
	bootstrap bool // start a new cluster (the first start of node 1 only)
	// user runs mariadbd when the test runs as root; uid and gid own its
	// directory (-1: the test's own user, nothing to hand over).
	user     string
	uid, gid int
}

// StartGalera starts an n-node Galera cluster for the test, waits until
// every node is Synced in a cluster of n, and stops it at cleanup. A
// missing galera-4, rsync or mysql user fails the test.
func StartGalera(t testing.TB, n int) *Cluster {
	t.Helper()
	return svcproc.ForTest(t, &svcproc.Shared[*Cluster]{Name: "mariadbtest: Galera cluster", Stop: (*Cluster).Stop,
		Start: func(ctx context.Context) (*Cluster, error) { return startGalera(ctx, os.TempDir(), n) }})
}

// galeraUser is who runs the nodes. As root, Debian's mysql user: the
// rsync state transfer drops root to nobody, which cannot write a joiner's
// data directory, so the nodes and their directories belong to mysql.
func galeraUser() (name string, uid, gid int, err error) {
	if _, err := os.Stat(galeraProvider); err != nil {
		return "", 0, 0, fmt.Errorf("mariadbtest: Galera needs Debian's galera-4 (./scripts/test installs it): %w", err)
	}
	if _, err := exec.LookPath("rsync"); err != nil {
		return "", 0, 0, fmt.Errorf("mariadbtest: Galera's state transfer needs rsync (./scripts/test installs it): %w", err)
	}
	if os.Geteuid() != 0 {
		return "", -1, -1, nil
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		return "", 0, 0, fmt.Errorf("mariadbtest: Galera nodes run as the mysql user that Debian's mariadb-server creates: %w", err)
	}
	uid, err = strconv.Atoi(u.Uid)
	if err == nil {
		gid, err = strconv.Atoi(u.Gid)
	}
	if err != nil {
		return "", 0, 0, fmt.Errorf("mariadbtest: mysql user: %w", err)
	}
	return u.Username, uid, gid, nil
}

func startGalera(ctx context.Context, base string, n int) (_ *Cluster, err error) {
	name, uid, gid, err := galeraUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "galera")
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	c := &Cluster{dir: dir}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	// The nodes' user must reach their directories inside this one.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	nodes, ports, err := galeraNodes(n, name, uid, gid)
	if err != nil {
		return nil, err
	}
	for i, g := range nodes {
		s, err := startNode(ctx, filepath.Join(dir, g.name), ports[i], g, i == 0)
		if err != nil {
			return nil, fmt.Errorf("mariadbtest: %s: %w", g.name, err)
		}
		c.Nodes = append(c.Nodes, s)
		// One joiner at a time: a donor serves one snapshot transfer.
		if err := s.waitSynced(ctx, i+1, time.Minute); err != nil {
			return nil, err
		}
	}
	for _, s := range c.Nodes {
		if err := s.waitSynced(ctx, n, time.Minute); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// galeraNodes picks every node's ports: the client port and the cluster's
// three.
func galeraNodes(n int, name string, uid, gid int) ([]*galeraNode, []int, error) {
	nodes := make([]*galeraNode, n)
	ports := make([]int, n)
	var members []string
	for i := range nodes {
		var p [4]int
		for j := range p {
			var err error
			if p[j], err = svcproc.FreePort(); err != nil {
				return nil, nil, err
			}
		}
		ports[i] = p[0]
		nodes[i] = &galeraNode{name: fmt.Sprintf("node%d", i+1), gmcast: p[1], ist: p[2], sst: p[3],
			user: name, uid: uid, gid: gid}
		members = append(members, "127.0.0.1:"+strconv.Itoa(p[1]))
	}
	for _, g := range nodes {
		g.members = "gcomm://" + strings.Join(members, ",")
	}
	return nodes, ports, nil
}

// startNode installs the first node's data directory (joiners receive
// theirs by state transfer) and starts the node.
func startNode(ctx context.Context, dir string, port int, g *galeraNode, first bool) (*Server, error) {
	for _, sub := range []string{"data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("mariadbtest: %w", err)
		}
	}
	if err := g.own(dir); err != nil {
		return nil, err
	}
	if first {
		if err := installDB(ctx, dir, g.user); err != nil {
			return nil, err
		}
	}
	g.bootstrap = first
	s, err := launch(ctx, dir, port, g)
	g.bootstrap = false // a restarted node 1 joins the others
	return s, err
}

// defaultsFile writes the node's settings, flags and cluster alike, to
// dir/my.cnf and returns mariadbd's arguments.
func (g *galeraNode) defaultsFile(dir string, flags []string) ([]string, error) {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	for _, f := range flags {
		b.WriteString(strings.TrimPrefix(f, "--") + "\n")
	}
	if g.user != "" {
		fmt.Fprintf(&b, "user=%s\n", g.user)
	}
	fmt.Fprintf(&b, `binlog_format=ROW
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=%s
wsrep_cluster_name=mariadbtest
wsrep_cluster_address=%s
wsrep_node_name=%s
wsrep_node_address=127.0.0.1
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.size=32M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:%d
`, galeraProvider, g.members, g.name, g.gmcast, g.ist, g.sst)
	path := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	args := []string{"--defaults-file=" + path}
	if g.bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	return args, nil
}

// own hands the node's directory to the user that runs it.
func (g *galeraNode) own(dir string) error {
	if g.uid < 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, g.uid, g.gid)
	})
}

// waitSynced waits until the node reports wsrep_local_state_comment
// Synced in a cluster of size nodes.
func (s *Server) waitSynced(ctx context.Context, size int, limit time.Duration) error {
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return fmt.Errorf("mariadbtest: %w", err)
	}
	defer db.Close()
	deadline := time.Now().Add(limit)
	state, got := "", 0
	for {
		err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'").Scan(new(string), &state)
		if err == nil {
			err = db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").Scan(new(string), &got)
		}
		if err == nil && state == "Synced" && got == size {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("mariadbtest: %s not Synced in a cluster of %d after %s (state %q, size %d, %v)\n%s",
				s.Addr, size, limit, state, got, err, svcproc.Tail(string(log), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewDatabase creates a database through node 1, from which Galera
// replicates it to every node, and drops it at cleanup. It returns once
// every node has it: node 1 answers when the cluster has certified the
// statement, the others apply it in their own time, and a client that
// reaches one of them first is told the database is unknown.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := c.Nodes[0].NewDatabase(t)
	for _, s := range c.Nodes[1:] {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := s.Exec(context.Background(), name, "DO 1")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mariadbtest: database %s not on %s after 30 s: %v", name, s.Addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return name
}

// Stop stops every node at once and removes the cluster's directory.
func (c *Cluster) Stop() error {
	defer os.RemoveAll(c.dir)
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, s := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
