package novafull

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Debian's RabbitMQ scripts, run directly: /usr/sbin/rabbitmq-server
// switches to the rabbitmq user and the system node's settings.
const (
	rabbitServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"
	rabbitCtl    = "/usr/lib/rabbitmq/bin/rabbitmqctl"
	epmd         = "/usr/bin/epmd"
)

// rabbit is a RabbitMQ node of the harness's own: its own epmd on its
// own port, cookie, node name and data under dir, listening for AMQP on
// 127.0.0.1 only.
type rabbit struct {
	dir, node string
	amqpPort  int
	env       []string
	epmd      *svcproc.Proc
	server    *svcproc.Proc
}

// startRabbit starts epmd and the node, and waits until the node takes
// AMQP connections.
func startRabbit(ctx context.Context, dir string) (*rabbit, error) {
	var ports [3]int
	for i := range ports {
		p, err := svcproc.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	r := &rabbit{dir: dir, node: fmt.Sprintf("novafull%d@localhost", ports[0]), amqpPort: ports[1]}
	conf := fmt.Sprintf("listeners.tcp.1 = 127.0.0.1:%d\nloopback_users = none\n", r.amqpPort)
	files := map[string]string{"rabbitmq.conf": conf, "env.conf": "", "enabled_plugins": "[].\n",
		".erlang.cookie": fmt.Sprintf("novafull%d%d", ports[0], time.Now().UnixNano())}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o400); err != nil {
			return nil, fmt.Errorf("novafull: rabbitmq: %w", err)
		}
	}
	r.env = svcproc.Env(dir, dir,
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "env.conf"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_NODENAME="+r.node,
		"RABBITMQ_DIST_PORT="+strconv.Itoa(ports[2]),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(dir, "plugins"),
		"RABBITMQ_FEATURE_FLAGS_FILE="+filepath.Join(dir, "feature_flags"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "rabbit.pid"),
		"RABBITMQ_LOGS=-",
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"ERL_EPMD_PORT="+strconv.Itoa(ports[0]))
	// epmd in the foreground, in a group of its own: left to the node it
	// would daemonise and outlive the harness.
	cmd := exec.Command(epmd, "-port", strconv.Itoa(ports[0]), "-address", "127.0.0.1")
	cmd.Env, cmd.Dir = r.env, dir
	var err error
	if r.epmd, err = svcproc.Start(cmd, filepath.Join(dir, "epmd.log")); err != nil {
		return nil, fmt.Errorf("novafull: start epmd: %w", err)
	}
	cmd = exec.Command(rabbitServer)
	cmd.Env, cmd.Dir = r.env, dir
	if r.server, err = svcproc.Start(cmd, filepath.Join(dir, "rabbitmq.log")); err != nil {
		r.stop()
		return nil, fmt.Errorf("novafull: start rabbitmq-server: %w", err)
	}
	if err := r.waitReady(ctx, 120*time.Second); err != nil {
		err = fmt.Errorf("%w\n%s", err, r.server.LogTail(3000))
		r.stop()
		return nil, err
	}
	return r, nil
}

// waitReady waits until the node boots (rabbitmqctl await_startup) and
// its AMQP port takes connections.
func (r *rabbit) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if exited, err := r.server.Exited(); exited {
			return fmt.Errorf("novafull: rabbitmq-server exited during start-up: %v", err)
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.amqpPort)), time.Second)
		if err == nil {
			c.Close()
			_, err = r.ctl(ctx, "await_startup")
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("novafull: rabbitmq not listening after %s: %w", limit, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ctl runs rabbitmqctl against the node.
func (r *rabbit) ctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, rabbitCtl, append([]string{"-n", r.node}, args...)...)
	cmd.Env, cmd.Dir = r.env, r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("novafull: rabbitmqctl %v: %w\n%s", args, err, svcproc.Tail(string(out), 2000))
	}
	return string(out), nil
}

// vhost creates a virtual host for guest and returns its transport URL.
func (r *rabbit) vhost(ctx context.Context, name string) (string, error) {
	if _, err := r.ctl(ctx, "add_vhost", name); err != nil {
		return "", err
	}
	if _, err := r.ctl(ctx, "set_permissions", "-p", name, "guest", ".*", ".*", ".*"); err != nil {
		return "", err
	}
	return fmt.Sprintf("rabbit://guest:guest@127.0.0.1:%d/%s", r.amqpPort, name), nil
}

// stop ends the node, then its epmd.
func (r *rabbit) stop() {
	if r.server != nil {
		_ = r.server.Stop(syscall.SIGTERM, 20*time.Second)
	}
	if r.epmd != nil {
		_ = r.epmd.Stop(syscall.SIGTERM, 5*time.Second)
	}
}
