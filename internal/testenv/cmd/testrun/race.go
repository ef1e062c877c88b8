package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// concurrent reports whether a package's code or tests start goroutines, which is what
// decides whether its tests run under the race detector: a go statement, a t.Parallel call,
// or an import of golang.org/x/sync (errgroup starts goroutines). A package whose tests run on
// one goroutine gets nothing from -race but its cost (its tests run 2–10 times slower: the
// cartography family's 2 CPU-s became 16, and its binary links in more CPU): it is tested in
// the plain set, whatever locks it holds for its concurrent callers. Its code still runs under the race
// detector where a concurrent package uses it (the api, the worker, the coordinator and
// mapdraw serve the REST, WMS, query and style packages from many goroutines in their own
// tests). files are the package's Go files, test files included, relative to dir. A file
// that cannot be parsed counts as concurrent: go test will report it.
func concurrent(dir string, files []string) bool {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return true
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "golang.org/x/sync/") {
				return true
			}
		}
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				found = true
			case *ast.SelectorExpr:
				if n.Sel.Name == "Parallel" {
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
