package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// syncd is placement-syncd for this package's tests: the binary, built
// once with the version and commit below on first use, and run, the
// entry point the daemons started in process go through.
var syncd = daemontest.Main{Package: ".", Run: run,
	LDFlags: fmt.Sprintf("-X main.version=%s -X main.commit=%s", testVersion, testCommit)}

// testVersion and testCommit are linked into the test binary to check
// -ldflags handling.
const (
	testVersion = "1.2.3-test"
	testCommit  = "0123456789abcdef"
)

// TestMain stops the real Nova if a test started it, removes the built
// binary, and checks that run leaves no goroutine behind once its
// context has ended (every actor has an owner and stops).
func TestMain(m *testing.M) { os.Exit(svcproc.RunMain(m, realNova, &syncd, svcproc.NoLeaks())) }

// devstackConf is placement.conf as devstack writes it, on the database
// connection names (the config package's testdata).
func devstackConf(t *testing.T, connection string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("internal", "config", "testdata", "devstack-placement.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "CONNECTION", connection, 1)
}

// loadConfig is config.Load of one YAML file and overrides.
func loadConfig(path string, overrides []config.Override) (config.Config, error) {
	cfg, _, err := config.Load(config.Sources{YAML: path, Overrides: overrides})
	return cfg, err
}

// serveArgs is `serve` on db, listening on a port of its choice, with
// extra arguments.
func serveArgs(db string, extra ...string) []string {
	return append([]string{"serve", "--listen", "127.0.0.1:0", "--db", db}, extra...)
}

// freeAddr is a loopback address nothing listens on now, for a child to
// listen on or a client to find closed.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := svcproc.FreeAddr()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return addr
}
