// Package archtest checks the project's structure: which packages may
// import which (layering_test.go), and how large a file or a function may
// grow (shape_test.go), so that the layering in the style guide does not
// erode.
package archtest

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/placement-syncd/placement-syncd"

// rule bans, for every package matched by pkgs (an import path relative to
// the module, or such a path followed by "/..." for the whole tree), any
// dependency matched by never. Dependencies are followed transitively and
// include what the package's own tests import; a test may reach a real
// server only through a harness package (see harnesses), unless strict.
type rule struct {
	pkgs   []string
	except []string // packages of pkgs the rule leaves out
	never  []string // module-relative paths, or full paths when they contain a dot
	strict bool     // harnesses give no way through
	notest bool     // the package's tests are not checked (they assemble the whole)
	direct bool     // only the package's own imports, not theirs
	why    string
}

// harnesses start real servers for tests (ours, the reference, Ironic,
// Keystone and doubles). Tests of the agent and reconciler use them to
// talk to a real Placement over HTTP, which is a dependency of the test
// process, not of the code under test.
var harnesses = []string{"testkit/placementtest", "testkit/ironictest", "testkit/keystonetest", "testkit/novatest"}

// testHarnesses exist for tests (servers they start, doubles, metric
// helpers, the differential tester, their subprocess plumbing); no
// program imports them, and they all live in the test tree, testkit/.
var testHarnesses = []string{"testkit/..."}

// harnessPlumbing is what test harnesses share to run their services as
// subprocesses (ports, environment, process groups, logs).
var harnessPlumbing = []string{"testkit/svcproc"}

var rules = []rule{
	{pkgs: []string{"agent/..."}, never: []string{"placementsrv/...", "reconciler/..."},
		why: "the agent talks to any Placement through placementclient only"},
	{pkgs: []string{"reconciler/..."}, never: []string{"placementsrv/...", "agent/...", "drivers/..."},
		why: "the reconciler talks to any Placement through placementclient only"},
	{pkgs: []string{"reconciler/..."}, direct: true,
		never: []string{"database/sql", "github.com/go-sql-driver/mysql", "github.com/gophercloud/gophercloud/v2/pagination"},
		why:   "the reconciler reads Nova through novaclient only, declaring just the interfaces it consumes"},
	{pkgs: []string{"reconciler/audit"}, strict: true, never: []string{"reconciler"},
		why: "the audit knows nothing of the jobs that run it"},
	{pkgs: []string{"novaclient/..."}, strict: true,
		never: []string{"placementsrv/...", "placementclient/...", "agent/...", "reconciler/...", "drivers/..."},
		why:   "Nova's client knows none of its users: a leaf over gophercloud, the MySQL driver and plumbing"},
	{pkgs: []string{"drivers/..."}, strict: true,
		never: []string{"placementsrv/...", "placementclient/...", "agent/...", "reconciler/...",
			"github.com/gophercloud/gophercloud/v2/openstack/placement/..."},
		why: "drivers return desired trees; only the agent writes to Placement"},
	{pkgs: []string{"internal/backoff", "internal/localapi", "internal/heartbeat", "internal/httpserve", "internal/removallimit", "internal/atomicfile", "internal/dburl", "internal/osloconf", "internal/leader", "internal/cloudsyaml"}, strict: true,
		never: []string{"agent/...", "reconciler/...", "drivers/...", "placementsrv/...", "placementclient/...", "novaclient/..."},
		why:   "plumbing shared by the agent, the reconciler and the stores knows none of its users"},
	{pkgs: []string{"placementclient/..."}, never: []string{"placementsrv/...", "agent/...", "reconciler/...", "drivers/..."},
		why: "the client is a leaf over gophercloud"},
	{pkgs: []string{"placementsrv/..."}, never: []string{"agent/...", "reconciler/...", "drivers/...", "placementclient/...", "novaclient/..."},
		why: "the server knows nothing of its clients"},
	{pkgs: []string{"metrics"}, never: []string{"placementsrv/...", "agent/...", "reconciler/...",
		"github.com/prometheus/client_golang/prometheus/promhttp", "net/http"},
		why: "metrics names and registries are a leaf; serving them is metrics/endpoint's job"},
	{pkgs: []string{"placementsrv/store/feed"}, strict: true,
		never: []string{"placementsrv/ledger/...", "placementsrv/store/sqlite", "placementsrv/store/mysql", "database/sql", "net/http"},
		why:   "the change feed's payload is the store contract's operations, with no SQL and no rule"},
	{pkgs: []string{"placementsrv/store"}, strict: true,
		never: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "placementsrv/ledger/...", "database/sql", "net/http"},
		why:   "the store contract is records and transactions, with no SQL and no HTTP"},
	{pkgs: []string{"placementsrv/ledger/..."}, strict: true, notest: true,
		never: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "database/sql", "net/http",
			"github.com/prometheus/client_golang/prometheus/promhttp"},
		why: "Placement's rules run over any backend and know no HTTP; their tests run over the real one"},
	{pkgs: []string{"placementsrv/ledger/..."}, strict: true,
		never: []string{"placementsrv", "placementsrv/handlers/...", "placementsrv/middleware/...",
			"placementsrv/storetest/...", "github.com/prometheus/client_golang/prometheus/promhttp"},
		why: "the rules' tests drive the ledger itself over the real backend, not through the server or a stand-in backend"},
	{pkgs: []string{"placementsrv/ledger/replica"}, direct: true,
		never: []string{"placementsrv/ledger", "placementsrv/readmodel", "placementsrv/standard", "placementsrv/pyfmt",
			"placementsrv/store/sqlite", "placementsrv/store/mysql"},
		why: "replication knows neither the state nor the rules: it reaches the ledger's memory through replica.State, and its tests need no backend"},
	{pkgs: []string{"placementsrv/..."}, except: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "placementsrv/dbstore", "placementsrv/ledger", "placementsrv"},
		strict: true, never: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "placementsrv/dbstore"},
		why: "handlers, candidates and rules stay off concrete stores; only the process wires one in"},
	{pkgs: []string{"placementsrv/store/..."}, notest: true,
		never: []string{"placementsrv/ledger/...", "placementsrv/dbstore"},
		why:   "backends know no rules (their tests run the contract suite, which drives the ledger)"},
	{pkgs: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql"}, notest: true,
		never:  []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "internal/dburl"},
		direct: true,
		why:    "a backend is one database's SQL: it knows neither the other backend nor how URLs name databases"},
	{pkgs: []string{"placementsrv/dbstore"}, strict: true,
		never: []string{"placementsrv", "placementsrv/handlers/...", "placementsrv/middleware/..."},
		why:   "composing a backend and the ledger is storage, not HTTP"},
	{pkgs: []string{"placementsrv"}, notest: true, never: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql", "placementsrv/dbstore"},
		why: "the server is handed a store; it does not open one"},
	{pkgs: []string{"microversion"}, strict: true, never: []string{"...", "net/http"},
		why: "microversions are one vocabulary of the server, the client and the tools: a leaf any of them may import"},
	{pkgs: []string{"placementsrv/apierror", "placementsrv/jsonenc", "placementsrv/uuid4", "placementsrv/pyfmt"}, strict: true,
		never: []string{"...", "net/http"},
		why:   "error answers and JSON encoding are leaves every layer may use"},
	{pkgs: []string{"placementsrv/jsonschema"}, strict: true,
		never: []string{"microversion", "placementsrv", "placementsrv/schema", "placementsrv/release", "placementsrv/apierror",
			"placementsrv/standard", "placementsrv/policy/...", "placementsrv/query/...", "placementsrv/handlers/...",
			"placementsrv/middleware/...", "placementsrv/candidates/...", "placementsrv/store/...", "placementsrv/ledger/...", "net/http"},
		why: "the JSON Schema engine knows no API: Placement's schemas, their microversions and releases are placementsrv/schema's"},
	{pkgs: []string{"placementsrv/schema"}, strict: true,
		never: []string{"placementsrv/handlers/...", "placementsrv/middleware/...", "placementsrv/candidates/...",
			"placementsrv/store/...", "placementsrv/ledger/...", "net/http"},
		why: "Placement's request schemas are data over the engine, read by HTTP plumbing they do not know"},
	{pkgs: []string{"placementsrv/query/..."}, strict: true,
		never: []string{"placementsrv/handlers/...", "placementsrv/middleware/...", "placementsrv/candidates/...",
			"placementsrv/store/...", "placementsrv/ledger/...", "net/http"},
		why: "query parsing turns strings into requests and nothing else"},
	{pkgs: []string{"placementsrv/candidates/...", "placementsrv/explain/..."}, strict: true,
		never: []string{"placementsrv/store/...", "placementsrv/ledger/...", "placementsrv/handlers/...",
			"placementsrv/middleware/...", "net/http"},
		why: "the search engine and its explanations know nothing of storage or HTTP"},
	{pkgs: []string{"placementsrv/readmodel/..."}, strict: true,
		never: []string{"...", "net/http", "database/sql"},
		why:   "the read model is plain data the store side builds and the engine searches: a leaf of both"},
	{pkgs: []string{"placementsrv/store/...", "placementsrv/ledger/...", "placementsrv/storetest/...",
		"placementsrv/inventorymetrics/...", "placementsrv/dbstore"}, strict: true,
		never: []string{"placementsrv/candidates/..."},
		why:   "the store side builds and hands out the read model (readmodel) without standing above the search engine"},
	{pkgs: []string{"placementsrv/middleware/..."}, strict: true,
		never: []string{"placementsrv/handlers/...", "placementsrv/candidates/...", "placementsrv/store/...", "placementsrv/ledger/..."},
		why:   "HTTP plumbing serves every resource and knows none"},
	{pkgs: []string{"placementsrv/handlers/...", "placementsrv/inventorymetrics/..."}, strict: true,
		never: []string{"placementsrv/ledger/...", "placementsrv/store/sqlite", "placementsrv/store/mysql", "database/sql"},
		why:   "handlers read and write through the store contract, never an implementation of it"},
	{pkgs: []string{"..."}, except: testHarnesses, notest: true,
		never: testHarnesses,
		why:   "test harnesses (ours, the reference, doubles, MariaDB, metric helpers, the differential tester) are for tests only"},
	{pkgs: harnessPlumbing, strict: true, never: []string{"..."},
		why: "subprocess plumbing knows none of the harnesses or packages that use it"},
	{pkgs: []string{"testkit/difftest"}, never: []string{"placementsrv/...", "placementclient/...", "agent/...",
		"reconciler/...", "drivers/...", "github.com/gophercloud/gophercloud/v2/..."},
		why: "the differential tester speaks raw HTTP to any two Placements; its tests start them through placementtest"},
	{pkgs: []string{"adopt/upstream"}, strict: true, notest: true,
		never: []string{"placementsrv/ledger/...", "placementsrv/store/sqlite", "placementsrv/dbstore", "adopt/transfer", "adopt/verify", "net/http"},
		why:   "OpenStack Placement's schema is read and written over database/sql, knowing neither our rules nor our tables (its tests open files through store/sqlite)"},
	{pkgs: []string{"adopt/transfer"}, strict: true, notest: true,
		never: []string{"placementsrv/ledger/...", "placementsrv/store/sqlite", "placementsrv/dbstore", "adopt/upstream", "database/sql", "net/http"},
		why:   "an import writes through the backend contract only, so it fills every backend alike"},
	{pkgs: []string{"adopt/verify"}, strict: true,
		never: []string{"placementsrv/...", "placementclient/...", "adopt/upstream", "adopt/transfer", "database/sql"},
		why:   "verify speaks raw HTTP to any two Placements; what serves them is no concern of it"},
	{pkgs: []string{"..."}, except: []string{"placementsrv/dbstore", "placementsrv/store/sqlite", "placementsrv/store/mysql"}, notest: true, direct: true,
		never: []string{"placementsrv/store/sqlite", "placementsrv/store/mysql"},
		why:   "dbstore is the one opener that knows every backend; the rest ask it (tests may open a backend themselves; see also backends_test.go)"},
	{pkgs: []string{"..."}, except: []string{"placementsrv/store/sqlite"}, direct: true,
		never: []string{"github.com/mattn/go-sqlite3"},
		why:   "the cgo SQLite driver is confined to store/sqlite"},
	{pkgs: []string{"placementsrv/..."}, except: []string{"placementsrv/store/mysql"}, direct: true,
		never: []string{"github.com/go-sql-driver/mysql"},
		why:   "within the server, the MySQL driver is store/mysql's alone (URLs are read by internal/dburl)"},
}

// pkgInfo is the part of `go list -json` the rules read.
type pkgInfo struct {
	ImportPath   string
	Name         string
	Standard     bool
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// loadGraph lists every package the module's packages and tests reach.
func loadGraph(t *testing.T) map[string]*pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-deps", "-test", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string]*pkgInfo{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		// Test variants ("p [p.test]") and test mains are folded into p.
		if strings.HasSuffix(p.ImportPath, ".test") || strings.Contains(p.ImportPath, " [") {
			continue
		}
		graph[p.ImportPath] = &p
	}
	return graph
}

// full turns a rule path into an import path prefix test.
func full(p string) string {
	if p == "..." {
		return module + "/..."
	}
	first := strings.SplitN(p, "/", 2)[0]
	if strings.Contains(first, ".") || !inModule(first) {
		return p // another module's, or the standard library's ("net/http")
	}
	return module + "/" + p
}

func matches(pattern, path string) bool {
	pattern = full(pattern)
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchesAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, path) })
}

// reach returns every package p depends on, with the path that leads to
// each, following its tests' imports too unless r.notest, and the
// imports of the module's packages only.
func reach(graph map[string]*pkgInfo, p *pkgInfo, r rule) map[string][]string {
	start := slices.Clone(p.Imports)
	if !r.notest {
		start = append(append(start, p.TestImports...), p.XTestImports...)
	}
	seen := map[string][]string{}
	queue := make([][]string, 0, len(start))
	for _, s := range start {
		queue = append(queue, []string{p.ImportPath, s})
	}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		d := chain[len(chain)-1]
		if _, ok := seen[d]; ok || d == p.ImportPath {
			continue
		}
		seen[d] = chain
		if r.direct {
			continue
		}
		if !r.strict && matchesAny(harnesses, d) && !slices.Contains(p.Imports, d) {
			continue // a test's harness: its server is not a dependency of p
		}
		// Another module's dependencies are its own: a rule bans what our
		// code uses, not what a library uses inside.
		if info, ok := graph[d]; ok && strings.HasPrefix(d, module+"/") {
			for _, next := range info.Imports {
				queue = append(queue, append(slices.Clone(chain), next))
			}
		}
	}
	return seen
}

func TestLayering(t *testing.T) {
	graph := loadGraph(t)
	for _, r := range rules {
		checkRule(t, graph, r)
	}
}

// checkRule reports, in a subtest named by the rule's packages, every
// dependency the rule bans.
func checkRule(t *testing.T, graph map[string]*pkgInfo, r rule) {
	t.Run(strings.Join(r.pkgs, ","), func(t *testing.T) {
		checked := 0
		for path, p := range graph {
			if !matchesAny(r.pkgs, path) || matchesAny(r.except, path) {
				continue
			}
			checked++
			for d, chain := range reach(graph, p, r) {
				if matchesAny(r.never, d) {
					t.Errorf("%s depends on %s (%s): %s", path, d, strings.Join(chain, " -> "), r.why)
				}
			}
		}
		if checked == 0 {
			t.Errorf("rule matches no package: %v", r.pkgs)
		}
	})
}

// inModule reports whether dir is a folder at the module's root, so that
// a rule path under it is relative to the module.
func inModule(dir string) bool {
	fi, err := os.Stat(filepath.Join(moduleRoot, dir))
	return err == nil && fi.IsDir()
}
