// Package archtest checks the project's dependency rules: which packages
// may import which, so that the layering written in the style guide does
// not erode.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/placement-syncd/placement-syncd"

// sharedNever is what the plumbing shared by the agent and the reconciler
// must not depend on.
var sharedNever = []string{"agent", "reconciler", "drivers", "placementsrv", "placementclient"}

// forbidden maps a package pattern to module packages it must never depend
// on, directly or not.
var forbidden = []struct {
	pkg   string
	never []string
	why   string
}{
	{"agent", []string{"placementsrv"}, "the agent talks to any Placement through placementclient only"},
	{"reconciler", []string{"placementsrv", "agent", "drivers"}, "the reconciler talks to any Placement through placementclient only"},
	{"drivers", []string{"placementsrv", "placementclient", "agent"}, "drivers return desired trees; the agent writes"},
	{"placementclient", []string{"placementsrv", "agent", "reconciler", "drivers"}, "the client is a leaf over gophercloud"},
	{"placementsrv/store", []string{"placementsrv/store/sqlite", "database/sql", "net/http"}, "the store contract holds no SQL and no HTTP"},
	{"placementsrv", []string{"agent", "reconciler", "drivers", "placementclient"}, "the server knows nothing of its clients"},
	{"metrics", []string{"placementsrv", "agent", "reconciler"}, "metrics is a leaf"},
	{"internal/backoff", sharedNever, "shared plumbing knows none of its users"},
	{"internal/localapi", sharedNever, "shared plumbing knows none of its users"},
	{"internal/heartbeat", sharedNever, "shared plumbing knows none of its users"},
	{"internal/metricset", sharedNever, "shared plumbing knows none of its users"},
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	// The store contract is checked alone; every other rule covers the
	// package and its sub-packages.
	pattern := module + "/" + pkg + "/..."
	if pkg == "placementsrv/store" {
		pattern = module + "/" + pkg
	}
	out, err := exec.Command("go", "list", "-deps", pattern).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestLayering(t *testing.T) {
	for _, rule := range forbidden {
		t.Run(rule.pkg, func(t *testing.T) {
			for _, d := range deps(t, rule.pkg) {
				for _, n := range rule.never {
					target := n
					if n != "net/http" && n != "database/sql" {
						target = module + "/" + n
					}
					// A package may use its own sub-packages (placementsrv/store/sqlite
					// under placementsrv is fine); only the named tree is banned.
					if d == target || strings.HasPrefix(d, target+"/") {
						if strings.HasPrefix(target, module+"/"+rule.pkg) {
							continue
						}
						t.Errorf("%s depends on %s: %s", rule.pkg, d, rule.why)
					}
				}
			}
		})
	}
}
