package svcproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// ErrNotInstalled marks a start that failed for a missing package; the
// error says what to install. Such a start is not tried again.
var ErrNotInstalled = errors.New("not installed")

// Shared is the one lifecycle of a real service for a whole test binary:
// started by the first test that asks for it (Get), or before the tests
// (RunEager), and stopped after them (RunMain).
type Shared[S any] struct {
	// Name names the service in messages.
	Name string
	// Start starts it. A failure other than ErrNotInstalled is tried
	// once more: a port picked free may have been taken by another test
	// binary before the service bound it.
	Start func(ctx context.Context) (S, error)
	// Stop stops it.
	Stop func(S) error
	// Took is how long its start took, once started.
	Took time.Duration

	once    sync.Once
	svc     S
	started bool
	err     error
}

// Get returns the service, starting it the first time; a start that
// failed fails every test that asks, with what to install when a package
// is missing.
func (s *Shared[S]) Get(t testing.TB) S {
	t.Helper()
	svc, err := s.start()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return svc
}

func (s *Shared[S]) start() (S, error) {
	s.once.Do(func() {
		began := time.Now()
		s.svc, s.err = s.Start(context.Background())
		if s.err != nil && !errors.Is(s.err, ErrNotInstalled) {
			fmt.Fprintf(os.Stderr, "%s: start failed, trying again: %v\n", s.Name, s.err)
			s.svc, s.err = s.Start(context.Background())
		}
		s.Took = time.Since(began)
		if s.err == nil {
			s.started = true
			fmt.Fprintf(os.Stderr, "%s: started in %s\n", s.Name, s.Took.Round(time.Millisecond))
		}
	})
	return s.svc, s.err
}

// Close stops the service if it was started.
func (s *Shared[S]) Close() error {
	if !s.started {
		return nil
	}
	s.started = false
	if err := s.Stop(s.svc); err != nil {
		return fmt.Errorf("%s: stop: %w", s.Name, err)
	}
	return nil
}

// Closer is a shared service RunMain stops after the tests.
type Closer interface{ Close() error }

// RunMain runs the tests and then stops every service given that was
// started: call it from TestMain, as os.Exit(svcproc.RunMain(m, svc)).
// A failed stop fails the run.
func RunMain(m *testing.M, services ...Closer) int {
	code := m.Run()
	for _, s := range services {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}

// RunEager starts s before the tests and stores it in *into, then runs
// them as RunMain does: a service that cannot start fails the run before
// any test.
func RunEager[S any](m *testing.M, s *Shared[S], into *S, more ...Closer) int {
	svc, err := s.start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*into = svc
	return RunMain(m, append([]Closer{s}, more...)...)
}

// ForTest starts a service of its own for one test, as s describes it
// (not shared, not tried again), and stops it at the test's cleanup; a
// failed start fails the test.
func ForTest[S any](t testing.TB, s *Shared[S]) S {
	t.Helper()
	svc, err := s.Start(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(svc); err != nil {
			t.Errorf("%s: stop: %v", s.Name, err)
		}
	})
	return svc
}

// NoLeaks is a Closer that fails the run if the tests left a goroutine
// behind; give it to RunMain last, after the services it must not count.
// Idle keep-alive connections of the default transport are closed first:
// they are a cache, not a leak.
func NoLeaks() Closer { return noLeaks{} }

type noLeaks struct{}

func (noLeaks) Close() error {
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	if err := goleak.Find(); err != nil {
		return fmt.Errorf("goleak: %w", err)
	}
	return nil
}
