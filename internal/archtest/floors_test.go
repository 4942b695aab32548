package archtest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// floor is one layer of the module: its packages may import packages of
// their own floor or of a floor below, never of one above.
type floor struct {
	name string
	pkgs []string // rule paths: "dir" or "dir/..."
}

// floors are the module's layers, lowest first. README.md's Layout table
// names every package with its floor (TestReadmeLayout).
var floors = []floor{
	{"plumbing", []string{"internal/atomicfile", "internal/backoff", "internal/cloudsyaml", "internal/dburl",
		"internal/heartbeat", "internal/httpserve", "internal/leader", "internal/localapi", "internal/osloconf",
		"internal/removallimit"}},
	{"vocabulary", []string{"microversion", "metrics/..."}},
	{"clients", []string{"placementclient/...", "novaclient/...", "drivers/..."}},
	{"components", []string{"placementsrv/...", "agent/...", "reconciler/...", "capacity/..."}},
	{"tools", []string{"adopt/..."}},
	{"test kit", []string{"testkit/..."}},
	{"command rooms", []string{"cmd/placement-syncd/internal/..."}},
	{"commands", []string{"cmd/placement-syncd", "cmd/replayserve"}},
	{"checks", []string{"internal/archtest"}},
}

// cmdFloors are the floors inside cmd/placement-syncd: its rooms below
// the commands that use them.
var cmdFloors = []floor{
	{"config", []string{"cmd/placement-syncd/internal/config"}},
	{"assemble", []string{"cmd/placement-syncd/internal/assemble"}},
	{"daemon", []string{"cmd/placement-syncd/internal/daemon", "cmd/placement-syncd/internal/demo"}},
	{"commands", []string{"cmd/placement-syncd"}},
}

// floorOf is the index of the floor a package is on, or -1.
func floorOf(fs []floor, path string) int {
	for i, f := range fs {
		if matchesAny(f.pkgs, path) {
			return i
		}
	}
	return -1
}

// modulePackages are the module's own packages in the graph, test-only
// packages (archtest) included.
func modulePackages(graph map[string]*pkgInfo) []string {
	var out []string
	for path := range graph {
		if strings.HasPrefix(path, module+"/") {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// checkFloors reports every package of scope on no floor, and every
// import (of the package's own code, not its tests) that runs up a floor.
func checkFloors(t *testing.T, graph map[string]*pkgInfo, fs []floor, scope string) {
	t.Helper()
	used := make([]bool, len(fs))
	for _, path := range modulePackages(graph) {
		if !matches(scope, path) {
			continue
		}
		at := floorOf(fs, path)
		if at < 0 {
			t.Errorf("%s is on no floor: add it to one", path)
			continue
		}
		used[at] = true
		for _, imp := range graph[path].Imports {
			if to := floorOf(fs, imp); to > at && matches(scope, imp) {
				t.Errorf("%s (floor %q) imports %s (floor %q): an import runs up a floor", path, fs[at].name, imp, fs[to].name)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("floor %q has no package", fs[i].name)
		}
	}
}

// TestFloors: at the top level and inside cmd/placement-syncd, every
// import points to the same floor or one below. Folders are checked as
// wholes by TestFolderFloors.
func TestFloors(t *testing.T) {
	graph := loadGraph(t)
	t.Run("module", func(t *testing.T) { checkFloors(t, graph, floors, "...") })
	t.Run("cmd", func(t *testing.T) { checkFloors(t, graph, cmdFloors, "cmd/placement-syncd/...") })
}

// layoutRow is a row of README.md's Layout table: "| floor | `path/` ... | what |".
var layoutRow = regexp.MustCompile("^\\| ([a-z ]+) \\| ((?:`[^`]+`(?:, )?)+) \\|")

// TestReadmeLayout: README.md's Layout table lists every package of the
// module, each on the floor it is on, so that the map a newcomer reads
// first is the one the code has.
func TestReadmeLayout(t *testing.T) {
	b, err := os.ReadFile(moduleRoot + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := layoutRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			listed[strings.TrimSuffix(p[1], "/")] = m[1]
		}
	}
	graph := loadGraph(t)
	for _, path := range modulePackages(graph) {
		rel := strings.TrimPrefix(path, module+"/")
		name, ok := listed[rel]
		if !ok {
			t.Errorf("README.md's Layout table does not list %s", rel)
			continue
		}
		if at := floorOf(floors, path); at >= 0 && floors[at].name != name {
			t.Errorf("README.md's Layout table puts %s on floor %q; it is on %q", rel, name, floors[at].name)
		}
	}
}

// startsServices are imports that mark a package starting servers or
// processes.
var startsServices = []string{"os/exec", "net/http/httptest", module + "/testkit/svcproc"}

// TestHarnessesInTestKit: a package that starts servers or processes and
// that no program imports is a test harness, and lives in the test tree,
// testkit/ (which only tests import: TestLayering; its own floor:
// TestFolderFloors), so that harness code never reads as product code.
func TestHarnessesInTestKit(t *testing.T) {
	graph := loadGraph(t)
	imported := map[string]bool{}
	for _, path := range modulePackages(graph) {
		for _, imp := range graph[path].Imports {
			imported[imp] = true
		}
	}
	for _, path := range modulePackages(graph) {
		p := graph[path]
		if p.Name == "main" || imported[path] || matches("testkit/...", path) {
			continue
		}
		if i := slices.IndexFunc(p.Imports, func(imp string) bool { return slices.Contains(startsServices, imp) }); i >= 0 {
			t.Errorf("%s starts services (it imports %s) and only tests import it: move it under testkit/", path, p.Imports[i])
		}
	}
}

// cmdRules keep the command's rooms to the command.
var cmdRules = []rule{
	{pkgs: []string{"..."}, except: []string{"cmd/placement-syncd/..."}, direct: true,
		never: []string{"cmd/placement-syncd/internal/config", "cmd/placement-syncd/internal/assemble", "cmd/placement-syncd/internal/daemon"},
		why:   "the configuration and how it becomes components are the command's; a component takes its options, never the YAML"},
	{pkgs: []string{"cmd/placement-syncd/internal/config"}, direct: true,
		never: []string{"cmd/placement-syncd/internal/assemble", "cmd/placement-syncd/internal/daemon", "database/sql", "net/http"},
		why:   "the configuration is read and checked, nothing is opened or served while it is"},
}

func TestCmdRooms(t *testing.T) {
	graph := loadGraph(t)
	for _, r := range cmdRules {
		checkRule(t, graph, r)
	}
}
