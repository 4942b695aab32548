package archtest

import (
	"slices"
	"strings"
	"testing"
)

// span is a top-level folder whose packages stand on more than one floor,
// from low to high, and why. Every folder not listed here is on one floor.
type span struct {
	folder    string
	low, high string // floor names
	why       string
}

// spans are the only folders on more than one floor.
var spans = []span{
	{"cmd", "command rooms", "commands",
		"cmd/placement-syncd's rooms stand below the command that uses them (cmdFloors orders them); nothing outside cmd imports either"},
	{"internal", "plumbing", "checks",
		"archtest is tests only and imports no package of the module (it reads them all through go list); the rest is plumbing"},
}

// folderOf is the top-level folder of a module package ("placementsrv"
// for placementsrv/store/sqlite).
func folderOf(path string) string {
	rel := strings.TrimPrefix(path, module+"/")
	folder, _, _ := strings.Cut(rel, "/")
	return folder
}

// floorNamed is the index of the floor called name, or -1.
func floorNamed(name string) int {
	return slices.IndexFunc(floors, func(f floor) bool { return f.name == name })
}

// folderFloors is each top-level folder's lowest and highest floor: its
// declared span, or the floor of its packages.
func folderFloors(t *testing.T, graph map[string]*pkgInfo) map[string][2]int {
	t.Helper()
	declared := map[string][2]int{}
	for _, s := range spans {
		lo, hi := floorNamed(s.low), floorNamed(s.high)
		if lo < 0 || hi < lo {
			t.Errorf("span of %s/: %q to %q is not a range of floors", s.folder, s.low, s.high)
		}
		declared[s.folder] = [2]int{lo, hi}
	}
	seen := map[string][2]int{}
	for _, path := range modulePackages(graph) {
		at := floorOf(floors, path)
		if at < 0 {
			continue // TestFloors reports it
		}
		f := folderOf(path)
		r, ok := seen[f]
		if !ok {
			r = [2]int{at, at}
		}
		seen[f] = [2]int{min(r[0], at), max(r[1], at)}
	}
	out := map[string][2]int{}
	for f, r := range seen {
		d, ok := declared[f]
		switch {
		case !ok && r[0] != r[1]:
			t.Errorf("%s/ holds packages of floors %q to %q: move them to one floor's folder, or declare the span in spans with a reason",
				f, floors[r[0]].name, floors[r[1]].name)
		case ok && r[0] == r[1]:
			t.Errorf("%s/ is declared spanning %q to %q but is all on %q: drop it from spans", f, floors[d[0]].name, floors[d[1]].name, floors[r[0]].name)
		case ok && (r[0] < d[0] || r[1] > d[1]):
			t.Errorf("%s/ holds packages of floors %q to %q, beyond its declared span", f, floors[r[0]].name, floors[r[1]].name)
		}
		if ok {
			r = d
		}
		out[f] = r
	}
	for f := range declared {
		if _, ok := seen[f]; !ok {
			t.Errorf("spans declares %s/, which holds no package", f)
		}
	}
	return out
}

// TestFolderFloors: seen as folders, imports run one way. Every top-level
// folder is on one floor (or a declared span), and a package imports from
// another folder only what stands on the floor of its own folder's lowest
// package or below, so no folder both uses and is used by another above it.
func TestFolderFloors(t *testing.T) {
	graph := loadGraph(t)
	ranges := folderFloors(t, graph)
	across, up := 0, 0
	for _, path := range modulePackages(graph) {
		from := folderOf(path)
		r, ok := ranges[from]
		if !ok {
			continue
		}
		for _, imp := range graph[path].Imports {
			to := floorOf(floors, imp)
			if to < 0 || folderOf(imp) == from {
				continue
			}
			across++
			if to > r[0] {
				up++
				t.Errorf("%s (folder %s/, from floor %q) imports %s (floor %q): an import runs up between folders",
					path, from, floors[r[0]].name, imp, floors[to].name)
			}
		}
	}
	if across == 0 {
		t.Fatal("no import between folders: the graph was not read")
	}
	t.Logf("%d imports between folders, %d of them up", across, up)
}
