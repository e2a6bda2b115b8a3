package conventions

import (
	"go/ast"
	"strings"
	"testing"
)

// waitCopies returns where f declares its own wait-for-a-condition helper
// (a function named like waitFor or eventually), instead of using
// internal/testwait. Methods are left alone: a type's own wait (for its
// next event, say) is not a poll.
func waitCopies(f sourceFile) []string {
	var out []string
	for _, d := range f.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		name := strings.ToLower(fn.Name.Name)
		if name == "waitfor" || name == "waituntil" || name == "eventually" {
			out = append(out, f.fset.Position(fn.Pos()).String()+": "+fn.Name.Name+" duplicates internal/testwait; use testwait.For, Within or Until")
		}
	}
	return out
}

func TestOneWaitFor(t *testing.T) {
	sample := parse(t, "x/x_test.go", "package x\nfunc waitFor(cond func() bool) {}\ntype e struct{}\nfunc (e) waitFor() {}\n")
	checkFinds(t, waitCopies, sample, 1, "copies in the sample (the one function)")
	reportFound(t, testSources(t), waitCopies, "")
}
