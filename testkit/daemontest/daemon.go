package daemontest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Started is the message of the log line serve writes once it listens;
// its field "listen" is the API's address.
const Started = "placement-syncd started"

// startTimeout bounds the wait for the ready line.
const startTimeout = time.Minute

// Options says how to start a daemon.
type Options struct {
	// Args is its command line after the program's name.
	Args []string
	// Dir is the binary's working directory ("" for the test's).
	Dir string
	// InProcess runs it through Main.Run in this process instead of as
	// the binary; it cannot then be killed, paused or restarted.
	InProcess bool
	// Ready is the log message Start waits for ("" for Started); its
	// "listen" field, when it has one, is the daemon's URL.
	Ready string
	// NoWait returns at once: the test waits for what it needs.
	NoWait bool
}

// Daemon is a started daemon: serve, agent, or a demo cycle.
type Daemon struct {
	// Log is what it writes on standard output and error.
	Log *Log
	// URL is the API's base URL ("http://" and the ready line's
	// "listen"), "" when the line has none.
	URL string
	// API sends requests to URL as the admin, at the newest microversion.
	API Client

	m      *Main
	opts   Options
	http   *http.Client
	cmd    *exec.Cmd          // as the binary
	cancel context.CancelFunc // in this process
	done   chan struct{}      // closed once it has exited
	code   int                // its exit code, set before done is closed
}

// Start starts a daemon, waits for its ready line unless told not to,
// and has the test's cleanup end it: a binary still running is killed, a
// daemon in this process is stopped and must exit 0.
func (m *Main) Start(t testing.TB, o Options) *Daemon {
	t.Helper()
	d := &Daemon{Log: &Log{}, m: m, opts: o, done: make(chan struct{}),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
	if o.InProcess {
		d.startInProcess(t)
	} else {
		d.startBinary(t)
	}
	t.Cleanup(func() { d.cleanup(t) })
	if o.NoWait {
		return d
	}
	ready := o.Ready
	if ready == "" {
		ready = Started
	}
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	line, err := d.Log.wait(ctx, d.done, ready, nil)
	if err != nil {
		t.Fatalf("daemontest: %v %v: no %q line: %v; log:\n%s", d.kind(), o.Args, ready, err, d.Log.Tail(4000))
	}
	if listen, ok := line["listen"].(string); ok {
		d.URL = "http://" + listen
	}
	d.API = d.Client(d.URL, "admin").At(microversion.Max.String())
	return d
}

func (d *Daemon) startInProcess(t testing.TB) {
	if d.m.Run == nil {
		t.Fatal("daemontest: Main.Run is not set: cannot start in process")
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() {
		d.code = d.m.Run(ctx, d.opts.Args, d.Log, d.Log)
		close(d.done)
	}()
}

func (d *Daemon) startBinary(t testing.TB) {
	t.Helper()
	cmd := exec.Command(d.m.Binary(t), d.opts.Args...)
	cmd.Dir = d.opts.Dir
	cmd.Stdout, cmd.Stderr = d.Log, d.Log
	if err := cmd.Start(); err != nil {
		t.Fatalf("daemontest: start %v: %v", d.opts.Args, err)
	}
	d.cmd = cmd
	go func() {
		_ = cmd.Wait()
		d.code = cmd.ProcessState.ExitCode()
		close(d.done)
	}()
}

func (d *Daemon) kind() string {
	if d.opts.InProcess {
		return "in process"
	}
	return "binary"
}

func (d *Daemon) cleanup(t testing.TB) {
	defer d.http.CloseIdleConnections()
	if d.opts.InProcess {
		if code := d.Stop(t); code != 0 {
			t.Errorf("daemontest: %v exited %d; log:\n%s", d.opts.Args, code, d.Log.Tail(4000))
		}
		return
	}
	d.Kill(t)
}

// Client is a client of base (another listener of the daemon: its
// agent's or reconciler's endpoint, /metrics) with token, sharing the
// daemon's connections.
func (d *Daemon) Client(base, token string) Client {
	return Client{Base: base, Token: token, HTTP: d.http}
}

// Pid is the binary's process id.
func (d *Daemon) Pid(t testing.TB) int {
	t.Helper()
	if d.cmd == nil {
		t.Fatal("daemontest: a daemon in process has no pid of its own")
	}
	return d.cmd.Process.Pid
}

// Exited says whether it has exited.
func (d *Daemon) Exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Done is closed once it has exited.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Stop ends it as an operator does, SIGTERM (or, in process, the end of
// its context, as a signal would), and returns its exit code once it has
// exited; it is killed if that takes longer than a minute.
func (d *Daemon) Stop(t testing.TB) int {
	t.Helper()
	if d.opts.InProcess {
		d.cancel()
	} else if !d.Exited() {
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("daemontest: SIGTERM: %v", err)
		}
	}
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		t.Errorf("daemontest: %s %v did not stop within a minute; log:\n%s", d.kind(), d.opts.Args, d.Log.Tail(4000))
		if d.opts.InProcess {
			return -1
		}
		d.Kill(t)
	}
	return d.code
}

// Kill sends the binary SIGKILL and waits until it is gone.
func (d *Daemon) Kill(t testing.TB) {
	t.Helper()
	if d.cmd == nil {
		t.Fatal("daemontest: a daemon in process cannot be killed")
	}
	if d.Exited() {
		return
	}
	if err := d.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("daemontest: kill: %v", err)
	}
	<-d.done
}

// Pause stops the binary with SIGSTOP for dur, continues it with SIGCONT
// (also when the test fails meanwhile) and returns when it was stopped.
func (d *Daemon) Pause(t testing.TB, dur time.Duration) (from, to time.Time) {
	t.Helper()
	pid := d.Pid(t)
	from = time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("daemontest: SIGSTOP %d: %v", pid, err)
	}
	defer func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Errorf("daemontest: SIGCONT %d: %v", pid, err)
		}
	}()
	time.Sleep(dur)
	return from, time.Now()
}

// Restart starts the binary again with the same options, killing it
// first if it still runs, and returns the new daemon.
func (d *Daemon) Restart(t testing.TB) *Daemon {
	t.Helper()
	if d.cmd != nil && !d.Exited() {
		d.Kill(t)
	}
	return d.m.Start(t, d.opts)
}

// String names it for messages.
func (d *Daemon) String() string {
	return fmt.Sprintf("%s %v at %s", d.kind(), d.opts.Args, d.URL)
}
