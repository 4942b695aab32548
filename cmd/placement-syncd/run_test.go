package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

func TestRun_Usage(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{args: nil, code: exitUsage, wantStderr: "usage: placement-syncd <command>"},
		{args: []string{"help"}, code: exitOK, wantStdout: "usage: placement-syncd <command>"},
		{args: []string{"bogus"}, code: exitUsage, wantStderr: `unknown command "bogus"`},
		{args: []string{"db"}, code: exitUsage, wantStderr: "db: missing subcommand"},
		{args: []string{"db", "drop"}, code: exitUsage, wantStderr: `db: unknown subcommand "drop"`},
		{args: []string{"serve", "extra"}, code: exitUsage, wantStderr: `serve: unexpected argument "extra"`},
		{args: []string{"serve", "-h"}, code: exitOK, wantStderr: "usage: placement-syncd serve"},
		{args: []string{"serve", "--log-level", "chatty"}, code: exitUsage, wantStderr: `flag --log-level: invalid level "chatty"`},
		{args: []string{"version"}, code: exitOK, wantStdout: "placement API microversions: 1.0 to 1.39"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestRun_DB(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sub", "p.db")
	steps := []struct {
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{args: []string{"db", "version", "--db", db}, code: exitFailure, wantStderr: "does not exist"},
		{args: []string{"db", "migrate", "--db", db}, code: exitOK, wantStdout: "migrated from schema version 0 to 2"},
		{args: []string{"db", "migrate", "--db", db}, code: exitOK, wantStdout: "already at schema version 2"},
		{args: []string{"db", "version", "--db", db}, code: exitOK, wantStdout: "database schema version: 2\nbinary schema version: 2\n"},
	}
	for _, s := range steps {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), s.args, &stdout, &stderr)
		if code != s.code || !strings.Contains(stdout.String(), s.wantStdout) || !strings.Contains(stderr.String(), s.wantStderr) {
			t.Fatalf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", s.args, code, s.code, stdout.String(), stderr.String())
		}
	}
	bumpSchema(t, db, 3)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"db", "version", "--db", db}, &stdout, &stderr); code != exitSchema {
		t.Errorf("db version of a newer database: exit %d, want %d", code, exitSchema)
	}
	if !strings.Contains(stdout.String(), "database schema version: 3") || !strings.Contains(stderr.String(), "newer than schema version 2") {
		t.Errorf("stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
}

// TestRun_Serve runs the whole program in-process with a config file, makes
// a request, and ends it through ctx as a signal would.
func TestRun_Serve(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "c.yaml")
	writeFile(t, cfgPath, "api:\n  listen: \"127.0.0.1:1\"\n  shutdown_grace: 2s\ndatabase:\n  path: "+filepath.Join(dir, "p.db")+"\nlog:\n  level: warn\n")

	// --listen and --log-level override the file: port 0, and info so
	// that the start-up line is logged.
	d := syncd.Start(t, daemontest.Options{InProcess: true,
		Args: []string{"serve", "--config", cfgPath, "--listen", "127.0.0.1:0", "--log-level", "info"}})
	d.API.MustDo(t, http.StatusOK, http.MethodGet, "/", nil)
	if code := d.Stop(t); code != exitOK {
		t.Errorf("exit code %d after shutdown; log:\n%s", code, d.Log)
	}
	if !strings.Contains(d.Log.String(), "placement-syncd stopped") {
		t.Errorf("no shutdown line in log:\n%s", d.Log)
	}
}

func TestRun_ServeListenFailure(t *testing.T) {
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--listen", addr, "--db", filepath.Join(dir, "p.db")}, &bytes.Buffer{}, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "listen on "+addr) {
		t.Errorf("exit %d, stderr: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "p.db")); err != nil {
		t.Errorf("database should have been opened first: %v", err)
	}
}
