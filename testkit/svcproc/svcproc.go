// Package svcproc is the subprocess plumbing the service test harnesses
// (ironictest, keystonetest, novatest, placementtest's reference;
// mariadbtest and novafull for ports and log tails) share, the one
// free-port picker of the module's tests, and the one lifecycle of a
// real service shared by a whole test binary (Shared, RunMain,
// RunEager): a free loopback port, the clean environment Debian's Python
// services run in, a service started in a process group of its own with
// its output in a log file, its stop, and the end of its log for error
// messages.
package svcproc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FreePort picks a TCP port on 127.0.0.1 that nothing listens on now.
// It is taken below the kernel's ephemeral range when there is room:
// a port the kernel handed out for a moment (bind to :0) is soon handed
// out again as the local port of some outgoing connection, and tests
// that make thousands of requests made a Galera node's state transfer
// find its port taken. Another harness may still take the same port
// before the caller binds it; callers that can retry do.
func FreePort() (int, error) {
	if lo, hi, ok := belowEphemeral(); ok {
		for range 64 {
			port := lo + rand.IntN(hi-lo)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("svcproc: pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr is FreePort as a listen address, "127.0.0.1:port".
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// belowEphemeral is a range of ports under the kernel's ephemeral range
// (ip_local_port_range), which outgoing connections never use.
func belowEphemeral() (lo, hi int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < 12000 {
		return 0, 0, false
	}
	return low - 10000, low, true
}

// Env is a service's whole environment: Debian's paths only, so that no
// virtualenv, pyenv or PYTHONPATH of the caller's reaches Debian's
// Python, with home and tmp as HOME and TMPDIR, then extra.
func Env(home, tmp string, extra ...string) []string {
	return append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + tmp}, extra...)
}

// Proc is a started service: its command's process and whatever it
// forks, in a process group of their own.
type Proc struct {
	// Log is the file its standard output and error go to.
	Log string

	cmd  *exec.Cmd
	done chan struct{} // closed once the command has been waited for
	err  error         // cmd.Wait's result, set before done is closed
}

// Start starts cmd (its Path, Args, Env and Dir set by the caller) in a
// process group of its own, with its output to a new file at logPath.
func Start(cmd *exec.Cmd, logPath string) (*Proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: Stop ends the service and the workers it
	// forked together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the command has exited, and if so how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Signal sends sig to the command's process alone (not its group).
func (p *Proc) Signal(sig os.Signal) error {
	return p.cmd.Process.Signal(sig)
}

// Stop sends sig to the process group, SIGKILL if the command has not
// exited after grace, waits for it, and then kills what is left of the
// group (workers that outlived their parent). Only a failure to send sig
// is an error; stopping a stopped Proc does nothing more.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) error {
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("svcproc: signal %s: %w", p.cmd.Path, err)
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// ReadLog is the service's log so far; "" if it cannot be read.
func (p *Proc) ReadLog() string {
	b, _ := os.ReadFile(p.Log)
	return string(b)
}

// LogTail is the last n bytes of the service's log, as Tail cuts them.
func (p *Proc) LogTail(n int) string { return Tail(p.ReadLog(), n) }

// Tail keeps the last n bytes of s, where a failing service writes why,
// marking a cut with "…".
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
