package placementsrv

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestRequestLog checks that every request, whatever stops it, logs one
// info line with method, path, status, microversion, duration and the
// request id the client got in x-openstack-request-id.
func TestRequestLog(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	ts := startServerOpts(t, nil, func(o *Options) { o.Logger = zap.New(core) })

	tests := []struct {
		name, method, path, token, version string
		status                             int
		microversion                       string
	}{
		{"ok", "GET", "/resource_providers", "admin", "1.39", 200, "1.39"},
		{"latest", "GET", "/traits", "admin", "latest", 200, "1.39"},
		{"default version", "GET", "/resource_providers", "admin", "", 200, "1.0"},
		{"no token", "GET", "/resource_providers", "", "1.39", 401, ""},
		{"unsupported version", "GET", "/usages", "admin", "1.99", 406, ""},
		{"unknown path", "GET", "/nowhere", "admin", "1.2", 404, "1.2"},
		{"method not allowed", "DELETE", "/traits", "admin", "1.6", 405, "1.6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.TakeAll()
			c := call{Method: tt.method, Path: tt.path, Version: tt.version, NoToken: tt.token == ""}
			if tt.token != "" {
				c.Headers = map[string]string{"X-Auth-Token": tt.token}
			}
			resp := ts.do(t, c)
			if resp.Status != tt.status {
				t.Fatalf("status %d, want %d", resp.Status, tt.status)
			}
			// The line is written after the response is sent, so the client
			// may see the answer first: wait for it, with a deadline.
			entries := waitForLogLines(logs, "request", 1, 5*time.Second)
			if len(entries) != 1 {
				t.Fatalf("%d request lines, want 1: %v", len(entries), entries)
			}
			e := entries[0]
			if e.Level != zapcore.InfoLevel {
				t.Errorf("level %s, want info", e.Level)
			}
			f := e.ContextMap()
			want := map[string]any{
				"method": tt.method, "path": tt.path, "status": int64(tt.status),
				"microversion": tt.microversion, "request_id": resp.Header.Get("X-Openstack-Request-Id"),
			}
			for k, v := range want {
				if f[k] != v {
					t.Errorf("%s = %#v, want %#v", k, f[k], v)
				}
			}
			if d, ok := f["duration"].(time.Duration); !ok || d <= 0 {
				t.Errorf("duration = %#v", f["duration"])
			}
			if !strings.HasPrefix(resp.Header.Get("X-Openstack-Request-Id"), "req-") {
				t.Errorf("request id header %q", resp.Header.Get("X-Openstack-Request-Id"))
			}
		})
	}
}

// waitForLogLines polls the observed logs until n entries with msg exist
// or the deadline passes, and returns what it found; extra lines that
// arrive meanwhile stay visible to the caller's count check.
func waitForLogLines(logs *observer.ObservedLogs, msg string, n int, timeout time.Duration) []observer.LoggedEntry {
	deadline := time.Now().Add(timeout)
	for {
		entries := logs.FilterMessage(msg).AllUntimed()
		if len(entries) >= n || time.Now().After(deadline) {
			return entries
		}
		time.Sleep(time.Millisecond)
	}
}
