package deptest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// architectureDoc is the contributors' code map, relative to the module root.
const architectureDoc = "docs/architecture.md"

// mapRow is one package line of the code map: the package, relative to the
// module, and the line as written (so a failure can quote it).
type mapRow struct {
	Package, Line string
	LineNo        int
}

// codeMap reads the table under the "## Code map" heading of doc: every row
// whose first cell is a package in backquotes. It fails on a map with no
// rows, or a package named twice, so a reshaped document cannot pass by
// matching nothing.
func codeMap(doc string) ([]mapRow, error) {
	var rows []mapRow
	in := false
	seen := map[string]int{}
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Code map"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		if !ok || cell == "" {
			continue
		}
		if first, dup := seen[cell]; dup {
			return nil, fmt.Errorf("%s:%d: package %s is listed twice (first on line %d); keep one line", architectureDoc, i+1, cell, first)
		}
		seen[cell] = i + 1
		rows = append(rows, mapRow{Package: cell, Line: line, LineNo: i + 1})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no code map found: want a \"## Code map\" section with a table whose rows start with | `package` |", architectureDoc)
	}
	return rows, nil
}

// mapDrift compares the map's packages with the module's (paths relative to
// the module) and says, for each difference, the line to add or remove.
func mapDrift(rows []mapRow, have []string) []string {
	var out []string
	mapped := map[string]bool{}
	for _, r := range rows {
		mapped[r.Package] = true
		if !slices.Contains(have, r.Package) {
			out = append(out, fmt.Sprintf("%s:%d names %s, which `go list ./...` does not have: remove the line\n\t%s", architectureDoc, r.LineNo, r.Package, r.Line))
		}
	}
	for _, p := range have {
		if !mapped[p] {
			out = append(out, fmt.Sprintf("%s misses package %s: add to its \"## Code map\" table the line\n\t| `%s` | <its job, in one line> |", architectureDoc, p, p))
		}
	}
	return out
}

// TestCodeMapMatchesPackages keeps docs/architecture.md's code map in step
// with the tree: every package `go list ./...` reports has its line, and no
// line names a package that is gone.
func TestCodeMapMatchesPackages(t *testing.T) {
	root := ModuleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, architectureDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := codeMap(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := List(root, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			t.Fatalf("go list ./... reported %s, outside module %s", p.ImportPath, module)
		}
		have = append(have, rel)
	}
	for _, d := range mapDrift(rows, have) {
		t.Error(d)
	}
}

// The map's reader and the comparison: the rows of the code map section only,
// and each difference told as the line to add or remove.
func TestCodeMapDrift(t *testing.T) {
	doc := strings.Join([]string{
		"# title",
		"| `notmap` | a table elsewhere |",
		"## Code map",
		"| package | its job |",
		"|---|---|",
		"| `a` | does a |",
		"| `gone/b` | did b |",
		"## Import rules",
		"| `c` | not the map |",
	}, "\n")
	rows, err := codeMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{rows[0].Package, rows[1].Package}; len(rows) != 2 || got[0] != "a" || got[1] != "gone/b" {
		t.Fatalf("rows %+v, want a and gone/b only", rows)
	}
	drift := mapDrift(rows, []string{"a", "new/c"})
	if len(drift) != 2 {
		t.Fatalf("drift %q, want one removal and one addition", drift)
	}
	if !strings.Contains(drift[0], ":7 names gone/b") || !strings.Contains(drift[0], "remove the line\n\t| `gone/b` | did b |") {
		t.Errorf("removal reads %q", drift[0])
	}
	if !strings.Contains(drift[1], "misses package new/c") || !strings.Contains(drift[1], "the line\n\t| `new/c` |") {
		t.Errorf("addition reads %q", drift[1])
	}
	if d := mapDrift(rows, []string{"a", "gone/b"}); len(d) != 0 {
		t.Errorf("a map matching the tree drifts: %q", d)
	}
	if _, err := codeMap("## Code map\n\nno table\n"); err == nil {
		t.Error("a code map with no rows was read without error")
	}
	if _, err := codeMap("## Code map\n| `a` | x |\n| `a` | y |\n"); err == nil {
		t.Error("a package listed twice was read without error")
	}
}
