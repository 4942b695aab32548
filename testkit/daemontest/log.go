package daemontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Log collects a process's output and finds its JSON log lines; a test
// may wait for one. Its zero value is ready; it is safe for concurrent
// use.
type Log struct {
	mu      sync.Mutex
	raw     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw.Write(p)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return len(p), nil
}

// String is everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String()
}

// Tail is the last n bytes written, for a failure's message.
func (l *Log) Tail(n int) string {
	s := l.String()
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Find returns the first JSON line with message msg whose fields include
// want (compared as strings).
func (l *Log) Find(msg string, want map[string]string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, _, ok := find(l.raw.Bytes(), 0, msg, want)
	return line, ok
}

// Field is the string field of the first JSON line with message msg; the
// test fails when there is none.
func (l *Log) Field(t testing.TB, msg, field string) string {
	t.Helper()
	line, ok := l.Find(msg, nil)
	if v, isString := line[field].(string); ok && isString {
		return v
	}
	t.Fatalf("daemontest: no %q line with %s in:\n%s", msg, field, l.Tail(8000))
	return ""
}

// Wait returns the first JSON line with message msg whose fields include
// want, waiting for it until ctx ends.
func (l *Log) Wait(t testing.TB, ctx context.Context, msg string, want map[string]string) map[string]any {
	t.Helper()
	line, err := l.wait(ctx, nil, msg, want)
	if err != nil {
		t.Fatalf("daemontest: no log line %q %v: %v; log:\n%s", msg, want, err, l.Tail(8000))
	}
	return line
}

// errExited is a wait cut short by the process's end.
var errExited = errors.New("the process exited")

// wait is Wait, also ending when exited is closed.
func (l *Log) wait(ctx context.Context, exited <-chan struct{}, msg string, want map[string]string) (map[string]any, error) {
	from := 0
	for {
		l.mu.Lock()
		line, next, ok := find(l.raw.Bytes(), from, msg, want)
		from = next
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return line, nil
		}
		select {
		case <-changed:
		case <-exited:
			// Its last words may have come with its end.
			if line, ok := l.Find(msg, want); ok {
				return line, nil
			}
			return nil, errExited
		case <-ctx.Done():
			return nil, fmt.Errorf("daemontest: %w", ctx.Err())
		}
	}
}

// find looks for the line in the complete lines of raw from offset from
// and returns where the next search starts.
func find(raw []byte, from int, msg string, want map[string]string) (map[string]any, int, bool) {
	for {
		i := bytes.IndexByte(raw[from:], '\n')
		if i < 0 {
			return nil, from, false
		}
		line := raw[from : from+i]
		from += i + 1
		var m map[string]any
		if json.Unmarshal(line, &m) != nil || m["msg"] != msg {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && fmt.Sprint(m[k]) == v
		}
		if ok {
			return m, from, true
		}
	}
}
