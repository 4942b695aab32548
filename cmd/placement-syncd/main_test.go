package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// testBin holds the placement-syncd binary built for the e2e tests of this
// package. It is built at most once per test process, on first use, so
// that unit tests run without it; TestMain removes it afterwards.
var testBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// testVersion and testCommit are linked into the test binary to check
// -ldflags handling.
const (
	testVersion = "1.2.3-test"
	testCommit  = "0123456789abcdef"
)

// TestMain also checks that run leaves no goroutine behind once its
// context has ended (every actor has an owner and stops).
func TestMain(m *testing.M) {
	code := m.Run()
	if err := realNova.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "novatest: %v\n", err)
		code = 1
	}
	if testBin.dir != "" {
		os.RemoveAll(testBin.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// binary returns the path of the built placement-syncd, building it on
// the first call.
func binary(t testing.TB) string {
	t.Helper()
	testBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "placement-syncd-e2e-")
		if err != nil {
			testBin.err = err
			return
		}
		testBin.dir = dir
		path := filepath.Join(dir, "placement-syncd")
		cmd := exec.Command("go", "build", "-o", path,
			"-ldflags", fmt.Sprintf("-X main.version=%s -X main.commit=%s", testVersion, testCommit), ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			testBin.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		testBin.path = path
	})
	if testBin.err != nil {
		t.Fatal(testBin.err)
	}
	return testBin.path
}

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
