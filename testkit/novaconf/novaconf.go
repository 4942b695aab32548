// Package novaconf is what the Nova harnesses (testkit/novatest,
// testkit/novafull) share of setting up Debian's Nova: where its pieces
// are, the nova.conf sections both write alike, nova-manage run over
// them, and a database's URL in Nova's form.
package novaconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Debian's paths; /usr/bin/python3 because the python3 first on PATH may
// be another installation that does not see Debian's python3-nova.
const (
	Python     = "/usr/bin/python3"
	NovaManage = "/usr/bin/nova-manage"
	APIPaste   = "/etc/nova/api-paste.ini"
)

// Missing fails with what to install (install) for the first of paths
// that is not there, and is nil when all are.
func Missing(install string, paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("novaconf: %s %w (%s): %w", p, svcproc.ErrNotInstalled, install, err)
		}
	}
	return nil
}

// DatabaseURL is database db of MariaDB s, reached as its root user, in
// Nova's form (as [api_database] connection and cell mappings take it).
func DatabaseURL(s *mariadbtest.Server, db string) string {
	return fmt.Sprintf("mysql+pymysql://%s@%s/%s?charset=utf8", s.User, s.Addr, db)
}

// Shared is what every harness's nova.conf says alike.
type Shared struct {
	// Dir is the harness's directory: lock_path is Dir/lock (made by
	// Write), and state_path Dir/state (made too; [DEFAULT] is the
	// harness's own).
	Dir string
	// APIDatabase and Database are [api_database] and [database]
	// connection.
	APIDatabase, Database string
	// Placement is the Placement Nova calls, with no auth.
	Placement string
}

// Write makes Dir/state and Dir/lock and writes path: own (the harness's
// [DEFAULT] and sections of its own) followed by the shared sections,
// the legacy policy defaults among them.
func Write(path, own string, s Shared) error {
	for _, d := range []string{"state", "lock"} {
		if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o700); err != nil {
			return fmt.Errorf("novaconf: %w", err)
		}
	}
	shared := fmt.Sprintf(`[api_database]
connection = %s
[database]
connection = %s
[oslo_concurrency]
lock_path = %s/lock
[placement]
auth_type = none
endpoint_override = %s
[oslo_policy]
enforce_scope = false
enforce_new_defaults = false
`, s.APIDatabase, s.Database, s.Dir, s.Placement)
	if err := os.WriteFile(path, []byte(own+shared), 0o600); err != nil {
		return fmt.Errorf("novaconf: %w", err)
	}
	return nil
}

// WriteDatabase writes a config file that only names a cell's database
// (url), read after nova.conf to sync that cell's schema.
func WriteDatabase(path, url string) error {
	if err := os.WriteFile(path, []byte("[database]\nconnection = "+url+"\n"), 0o600); err != nil {
		return fmt.Errorf("novaconf: %w", err)
	}
	return nil
}

// Run is one nova-manage run: its config files and its arguments.
type Run struct {
	Confs, Args []string
}

// ManageBeside runs each sequence of nova-manage runs beside the others
// (schema syncs of different databases take most of a harness's
// start-up), the runs of a sequence one after another up to the first
// that fails, and joins the sequences' errors.
func ManageBeside(ctx context.Context, dir string, sequences ...[]Run) error {
	errs := make(chan error, len(sequences))
	for _, runs := range sequences {
		go func() {
			for _, r := range runs {
				if _, err := Manage(ctx, dir, r.Confs, r.Args...); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var all []error
	for range sequences {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// Manage runs nova-manage in dir, with a clean environment for Debian's
// Python and the config files confs, and returns its output.
func Manage(ctx context.Context, dir string, confs []string, args ...string) (string, error) {
	full := []string{NovaManage}
	for _, c := range confs {
		full = append(full, "--config-file", c)
	}
	cmd := exec.CommandContext(ctx, Python, append(full, args...)...)
	cmd.Env, cmd.Dir = svcproc.Env(dir, dir), dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("novaconf: nova-manage %s: %w\n%s", strings.Join(args, " "), err, svcproc.Tail(string(out), 3000))
	}
	return string(out), nil
}
