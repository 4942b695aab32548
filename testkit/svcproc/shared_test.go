package svcproc

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// A shared service starts once, however many tests ask; a failed start
// is tried once more unless a package is missing; Close stops only what
// started, once.
func TestShared(t *testing.T) {
	var starts, stops int
	fail := 1
	s := &Shared[int]{Name: "test", Stop: func(int) error { stops++; return nil },
		Start: func(context.Context) (int, error) {
			starts++
			if fail > 0 {
				fail--
				return 0, errors.New("port taken")
			}
			return 42, nil
		}}
	if err := s.Close(); err != nil || stops != 0 {
		t.Fatalf("close before start: %v, %d stops", err, stops)
	}
	for range 3 {
		if got := s.Get(t); got != 42 {
			t.Fatalf("Get = %d", got)
		}
	}
	if starts != 2 {
		t.Errorf("%d starts, want 2 (one failed, tried again)", starts)
	}
	if err := s.Close(); err != nil || stops != 1 {
		t.Errorf("close: %v, %d stops", err, stops)
	}
	if err := s.Close(); err != nil || stops != 1 {
		t.Errorf("second close: %v, %d stops", err, stops)
	}

	missing := &Shared[int]{Name: "test", Stop: func(int) error { return nil },
		Start: func(context.Context) (int, error) {
			starts++
			return 0, fmt.Errorf("/usr/bin/x %w (apt-get install x)", ErrNotInstalled)
		}}
	starts = 0
	if _, err := missing.start(); !errors.Is(err, ErrNotInstalled) || starts != 1 {
		t.Errorf("missing package: %v after %d starts, want one start", err, starts)
	}
	if _, err := missing.start(); err == nil || starts != 1 {
		t.Errorf("asked again: %v after %d starts, want the first answer", err, starts)
	}
}
