// Package daemontest is the one harness the command's tests start
// placement-syncd with: the binary built once per test binary, a daemon
// run in this process (through the command's own entry point) or as the
// binary, replicas of it, SIGKILL, SIGSTOP/SIGCONT and restart, requests
// with Do and MustDo, and waits on a log line, a metric or a condition.
package daemontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Main is the command under test for a whole test binary: declare one in
// the test package, built on first use, and have TestMain close it (it
// is an svcproc.Closer).
type Main struct {
	// Package is what go build builds ("." for the package under test).
	Package string
	// LDFlags are go build's -ldflags.
	LDFlags string
	// Run is the command's entry point, as its main calls it: a daemon
	// started InProcess runs through it.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int

	once sync.Once
	dir  string
	path string
	err  error
}

// Binary returns the built command, building it on the first call.
func (m *Main) Binary(t testing.TB) string {
	t.Helper()
	path, err := m.build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func (m *Main) build() (string, error) {
	m.once.Do(func() {
		m.dir, m.err = os.MkdirTemp("", "daemontest-")
		if m.err != nil {
			return
		}
		// The command's own name: it names itself in its messages.
		abs, err := filepath.Abs(m.Package)
		if err != nil {
			m.err = fmt.Errorf("daemontest: %w", err)
			return
		}
		path := filepath.Join(m.dir, filepath.Base(abs))
		args := []string{"build", "-o", path}
		if m.LDFlags != "" {
			args = append(args, "-ldflags", m.LDFlags)
		}
		cmd := exec.Command("go", append(args, m.Package)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			m.err = fmt.Errorf("daemontest: go build %s: %w\n%s", m.Package, err, out)
			return
		}
		m.path = path
	})
	return m.path, m.err
}

// Close removes the built binary, after the tests.
func (m *Main) Close() error {
	if m.dir == "" {
		return nil
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("daemontest: %w", err)
	}
	return nil
}

// Result is a finished run of the binary.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Exec runs the binary with args to completion in dir (within a minute)
// and fails the test if it could not be run.
func (m *Main) Exec(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r, err := m.ExecContext(ctx, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ExecContext is Exec off the test's goroutine: a binary that could not
// be built or run is an error.
func (m *Main) ExecContext(ctx context.Context, dir string, args ...string) (Result, error) {
	bin, err := m.build()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return Result{}, fmt.Errorf("daemontest: run %v: %w", args, err)
	}
	return Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}, nil
}
