package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits for non-test Go files: a file over maxFileLines or a function
// over maxFuncLines is a unit nobody can hold in their head, and usually two
// concerns sharing one place.
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// shapeExempt lists the only files allowed past the limits, each with its
// reason. Only generated tables belong here; hand-written code is split.
var shapeExempt = map[string]string{}

// moduleRoot is the repository root, two levels above this package.
const moduleRoot = "../.."

func TestCodeShape(t *testing.T) {
	fset := token.NewFileSet()
	walkSources(t, func(path, rel string) {
		if _, ok := shapeExempt[rel]; !ok {
			checkShape(t, fset, path, rel)
		}
	})
}

// walkSources calls visit with the path, and the slash-separated path
// relative to the module, of every non-test Go file of the module
// (testdata, vendor, bin and hidden folders left out).
func walkSources(t *testing.T, visit func(path, rel string)) {
	t.Helper()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != moduleRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(moduleRoot, path)
		if err != nil {
			return err
		}
		visit(path, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", moduleRoot, err)
	}
}

func checkShape(t *testing.T, fset *token.FileSet, path, rel string) {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("parse %s: %v", rel, err)
		return
	}
	file := fset.File(f.Pos())
	if n := file.LineCount(); n > maxFileLines {
		t.Errorf("%s: %d lines, over the %d-line limit for a file", rel, n, maxFileLines)
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if lines > maxFuncLines {
			t.Errorf("%s: func %s is %d lines, over the %d-line limit for a function", rel, funcName(fn), lines, maxFuncLines)
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if idx, ok := recv.(*ast.IndexExpr); ok {
		recv = idx.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
