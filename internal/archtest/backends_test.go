package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// backendNamers may name a database driver (dburl.SQLite, dburl.MySQL):
// dburl defines them and dbstore chooses a backend by them. Anywhere
// else, a test of the driver is a backend-specific step that belongs in
// dbstore, asked in terms that fit any backend.
var backendNamers = []string{"internal/dburl", "placementsrv/dbstore"}

func TestBackendNamedOnlyByDBStore(t *testing.T) {
	fset := token.NewFileSet()
	walkSources(t, func(path, rel string) {
		if matchesAny(backendNamers, module+"/"+filepath.ToSlash(filepath.Dir(rel))) {
			return
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", rel, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "dburl" && (sel.Sel.Name == "SQLite" || sel.Sel.Name == "MySQL") {
				t.Errorf("%s: dburl.%s names a backend: only %s may (ask dbstore instead)", fset.Position(sel.Pos()), sel.Sel.Name, strings.Join(backendNamers, " and "))
			}
			return true
		})
	})
}
