package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
)

// The state, flag and action glyphs are defined once (internal/glyph) and
// text is flattened to one line once (internal/termtext): no other file of
// the module spells a glyph (but an ASCII one) as a string of its own, and no function of
// another package only wraps termtext.Line or termtext.OneLine under a name
// of its own. Two copies drift (they did: the text tree measured in runes
// what the dashboard measured in cells).
func TestOneGlyphTableOneFlattener(t *testing.T) {
	glyphs := map[string]string{}
	for _, g := range glyph.States {
		glyphs[g.Glyph] = string(g.State)
	}
	for _, g := range glyph.Flags {
		glyphs[g.Glyph] = string(g.Flag)
	}
	for _, g := range glyph.Actions {
		glyphs[g.Glyph] = string(g.Action)
	}
	for g := range glyphs {
		if g < "\u0080" {
			delete(glyphs, g) // an ASCII mark ("!") is spelled for other reasons too
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "internal/glyph" || dir == "internal/termtext" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				if s, err := strconv.Unquote(n.Value); err == nil {
					if word, ok := glyphs[s]; ok {
						t.Errorf("%s: %q is the glyph of %s: use internal/glyph", fset.Position(n.Pos()), s, word)
					}
				}
			case *ast.FuncDecl:
				if wraps := flattenerWrapped(n); wraps != "" {
					t.Errorf("%s: %s only wraps termtext.%s: call it", fset.Position(n.Pos()), n.Name.Name, wraps)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// flattenerWrapped names the termtext function fn's body only returns a
// call of ("" when it does anything else).
func flattenerWrapped(fn *ast.FuncDecl) string {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return ""
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return ""
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "termtext" && (sel.Sel.Name == "Line" || sel.Sel.Name == "OneLine") {
		return sel.Sel.Name
	}
	return ""
}
