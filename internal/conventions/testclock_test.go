package conventions

import (
	"go/ast"
	"strings"
	"testing"
)

// clockCopies returns where a test file declares its own test clock (a
// type with both Now and Advance methods) instead of using
// internal/testclock, whose Clock has Now, After and Advance.
func clockCopies(f sourceFile) []string {
	if !strings.HasSuffix(f.rel, "_test.go") {
		return nil
	}
	methods := map[string]map[string]ast.Node{} // receiver type → method name → where
	for _, d := range f.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
			continue
		}
		recv := fn.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		id, ok := recv.(*ast.Ident)
		if !ok {
			continue
		}
		if methods[id.Name] == nil {
			methods[id.Name] = map[string]ast.Node{}
		}
		methods[id.Name][fn.Name.Name] = fn
	}
	var out []string
	for typ, m := range methods {
		if m["Now"] != nil && m["Advance"] != nil {
			out = append(out, f.fset.Position(m["Advance"].Pos()).String()+": "+typ+" duplicates internal/testclock; use testclock.New")
		}
	}
	return out
}

func TestOneTestClock(t *testing.T) {
	sample := parse(t, "x/x_test.go", "package x\ntype clk struct{}\nfunc (c *clk) Now() {}\nfunc (c *clk) Advance() {}\ntype half struct{}\nfunc (half) Now() {}\n")
	checkFinds(t, clockCopies, sample, 1, "copies in the sample (the type with Now and Advance)")
	reportFound(t, testSources(t), clockCopies, "")
}
