// Package stalewords finds comments that name what is not there: a Go file, by its name or
// its path (a word ending in .go), another file by its path in backquotes (such as
// `scripts/test.sh`), a declaration of a package of the module (`testenv.Redis`,
// [blob.NewMinIO]) or, in a comment that stands alone between declarations, the function it
// once described ("get returns …" where the package declares no get).
//
// It reads comments only, with go/parser and no type checking, so a whole module takes about
// a second; the test command runs it over the tree (step "stale words") and fails on a finding.
// A package is known by its import name in the file, or by its name when no other package of
// the module has it; the lines of a code block in a doc comment are examples and not read.
// It is deliberately narrow: a word it cannot resolve with certainty (a method, a field, a
// package of another module, a path outside the module) is left alone, so that every finding is
// a comment to fix, not a rule to argue with.
package stalewords

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Finding is one stale word: where the comment is, the word, and why it does not resolve.
type Finding struct {
	Pos  token.Position // file relative to the checked root, line and column
	Word string
	Why  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %q %s", f.Pos.Filename, f.Pos.Line, f.Word, f.Why)
}

// pkg is what one directory of Go files declares.
type pkg struct {
	name  string              // package name (of the non-test files, else of any)
	names map[string]struct{} // top-level names and methods, of every file including tests
}

// tree is the checked module: its files and its packages by import path.
type tree struct {
	root     string
	module   string
	files    map[string]struct{} // every file, slash-separated path relative to root
	bases    map[string]struct{} // the base names of those files
	packages map[string]*pkg     // by import path
}

// Check reads every Go file under root, the directory of a go.mod, except in testdata,
// vendor, node_modules and hidden directories, and returns the stale words of their comments,
// ordered by file and line.
func Check(root string) ([]Finding, error) {
	t, parsed, err := load(root)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, pf := range parsed {
		out = append(out, t.checkFile(pf)...)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Pos.Filename, b.Pos.Filename), cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
	return out, nil
}

type parsedFile struct {
	rel  string // slash-separated, relative to root
	dir  string // import path of its package
	fset *token.FileSet
	file *ast.File
}

func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || name == "node_modules" ||
		(len(name) > 1 && (name[0] == '.' || name[0] == '_'))
}

func load(root string) (*tree, []parsedFile, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, nil, fmt.Errorf("stalewords: the root must hold a go.mod: %w", err)
	}
	t := &tree{
		root:     root,
		module:   modulePath(string(mod)),
		files:    map[string]struct{}{},
		bases:    map[string]struct{}{},
		packages: map[string]*pkg{},
	}
	if t.module == "" {
		return nil, nil, fmt.Errorf("stalewords: no module line in %s", filepath.Join(root, "go.mod"))
	}
	fset := token.NewFileSet()
	var parsed []parsedFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		t.files[rel] = struct{}{}
		t.bases[d.Name()] = struct{}{}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("stalewords: %w", err)
		}
		ip := path.Join(t.module, path.Dir(rel))
		pk := t.packages[ip]
		if pk == nil {
			pk = &pkg{names: map[string]struct{}{}}
			t.packages[ip] = pk
		}
		if name := f.Name.Name; pk.name == "" || !strings.HasSuffix(name, "_test") && !strings.HasSuffix(rel, "_test.go") {
			pk.name = strings.TrimSuffix(name, "_test")
		}
		declare(pk.names, f)
		parsed = append(parsed, parsedFile{rel: rel, dir: ip, fset: fset, file: f})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return t, parsed, nil
}

func modulePath(gomod string) string {
	for line := range strings.Lines(gomod) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// declare adds the top-level names of f to names: functions, types, variables, constants,
// and methods both as Name and as Type.Name.
func declare(names map[string]struct{}, f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[d.Name.Name] = struct{}{}
			if d.Recv != nil && len(d.Recv.List) == 1 {
				if recv := receiverType(d.Recv.List[0].Type); recv != "" {
					names[recv+"."+d.Name.Name] = struct{}{}
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = struct{}{}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = struct{}{}
					}
				}
			}
		}
	}
}

func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

var (
	// A Go file: a name ending in .go, with or without a directory, not part of a longer word
	// or a URL's host (go.dev).
	goFileRE = regexp.MustCompile(`(?:^|[\s(\[` + "`" + `"'])((?:[\w.-]+/)*[\w-][\w.-]*\.go)(?:$|[^\w/.-]|\.(?:$|\s))`)
	// A path in backquotes: at least one slash and an extension.
	quotedPathRE = regexp.MustCompile("`((?:[\\w.-]+/)+[\\w-][\\w.-]*\\.[a-z]{1,5})`")
	// pkg.Name, in or out of brackets and backquotes.
	qualifiedRE = regexp.MustCompile(`(?:^|[^\w.])([a-z][a-z0-9]*)\.([A-Z]\w*)\b`)
	// The first words of a comment that describes a declaration: "name returns", "name is".
	describesRE = regexp.MustCompile(`^([A-Za-z_]\w*) (?:returns|reports|is|makes|holds|keeps|writes|reads|starts|runs|checks|turns|builds|gives|tells|finds|puts|sets|says|draws|computes|parses|decodes|encodes)\b`)
)

func (t *tree) checkFile(pf parsedFile) []Finding {
	var out []Finding
	report := func(pos token.Pos, word, why string) {
		p := pf.fset.Position(pos)
		p.Filename = pf.rel
		out = append(out, Finding{Pos: p, Word: word, Why: why})
	}
	imports := map[string]string{} // name in this file → import path
	// The module's packages by name, where the name is unique: a comment may name a package
	// its file does not import.
	for ip, name := range t.uniqueNames() {
		imports[name] = ip
	}
	self := t.packages[pf.dir]
	imports[self.name] = pf.dir
	for _, im := range pf.file.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		if ip != t.module && !strings.HasPrefix(ip, t.module+"/") {
			continue // another module: its names are not checked
		}
		name := path.Base(ip)
		if p := t.packages[ip]; p != nil {
			name = p.name
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = ip
	}
	for _, cg := range pf.file.Comments {
		for _, c := range cg.List {
			text := c.Text
			if strings.HasPrefix(text, "//go:") || strings.HasPrefix(text, "//line ") ||
				strings.HasPrefix(text, "//\t") {
				continue // a directive, or a line of a code block (its names are the example's)
			}
			for _, m := range goFileRE.FindAllStringSubmatchIndex(text, -1) {
				word := text[m[2]:m[3]]
				if !t.fileExists(pf.rel, word) {
					report(c.Slash+token.Pos(m[2]), word, "names a file that does not exist")
				}
			}
			for _, m := range quotedPathRE.FindAllStringSubmatchIndex(text, -1) {
				word := text[m[2]:m[3]]
				if strings.HasSuffix(word, ".go") {
					continue // checked above
				}
				if !t.fileExists(pf.rel, word) {
					report(c.Slash+token.Pos(m[2]), word, "names a file that does not exist")
				}
			}
			for _, m := range qualifiedRE.FindAllStringSubmatchIndex(text, -1) {
				name, decl := text[m[2]:m[3]], text[m[4]:m[5]]
				ip, ok := imports[name]
				if !ok {
					continue
				}
				p := t.packages[ip]
				if p == nil {
					report(c.Slash+token.Pos(m[2]), name+"."+decl, "names a package that does not exist")
					continue
				}
				if _, ok := p.names[decl]; !ok {
					report(c.Slash+token.Pos(m[2]), name+"."+decl, "names a declaration that does not exist in "+ip)
				}
			}
		}
	}
	for _, cg := range floating(pf.file) {
		first := strings.TrimSpace(strings.TrimPrefix(cg.List[0].Text, "//"))
		m := describesRE.FindStringSubmatch(first)
		if m == nil || englishStart[m[1]] {
			continue
		}
		if _, ok := self.names[m[1]]; !ok {
			report(cg.Pos(), m[1], "begins a comment that describes no declaration")
		}
	}
	return out
}

// englishStart holds the words that begin a sentence about code rather than name it.
var englishStart = map[string]bool{
	"It": true, "This": true, "That": true, "The": true, "A": true, "An": true, "Each": true,
	"Every": true, "There": true, "Here": true, "What": true, "Which": true, "These": true,
	"Those": true, "One": true, "None": true, "All": true, "Both": true, "Its": true, "They": true,
	"it": true, "this": true, "that": true, "the": true, "there": true, "what": true, "which": true,
}

// floating returns the comment groups of f that stand between top-level declarations, attached
// to none: neither a declaration's doc comment nor the package's, nor inside a declaration.
func floating(f *ast.File) []*ast.CommentGroup {
	attached := map[*ast.CommentGroup]bool{f.Doc: true}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			attached[d.Doc] = true
		case *ast.GenDecl:
			attached[d.Doc] = true
		}
	}
	var out []*ast.CommentGroup
	for _, cg := range f.Comments {
		if attached[cg] || cg.Pos() < f.Name.End() {
			continue
		}
		inside := false
		for _, d := range f.Decls {
			if cg.Pos() >= d.Pos() && cg.End() <= d.End() {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, cg)
		}
	}
	return out
}

// fileExists resolves a file named in a comment of the file at rel: relative to that file's
// directory, to the root, or as the tail of a path in the tree; a bare name may be any file of
// that name in the tree (comments often name another package's file by its base name).
func (t *tree) fileExists(rel, word string) bool {
	word = strings.TrimPrefix(word, "./")
	if first, _, ok := strings.Cut(word, "/"); ok && strings.Contains(first, ".") && first != ".." {
		return true // another module's path (github.com/…) or a host: not ours to check
	}
	if _, ok := t.files[path.Join(path.Dir(rel), word)]; ok {
		return true
	}
	if _, ok := t.files[path.Clean(word)]; ok {
		return true
	}
	if !strings.Contains(word, "/") {
		_, ok := t.bases[word]
		return ok
	}
	for f := range t.files {
		if strings.HasSuffix(f, "/"+word) {
			return true
		}
	}
	return false
}

// uniqueNames returns the import paths of the module's packages whose name no other package
// of the module has, with those names.
func (t *tree) uniqueNames() map[string]string {
	count := map[string]int{}
	for _, p := range t.packages {
		count[p.name]++
	}
	out := map[string]string{}
	for ip, p := range t.packages {
		if count[p.name] == 1 && p.name != "main" {
			out[ip] = p.name
		}
	}
	return out
}
